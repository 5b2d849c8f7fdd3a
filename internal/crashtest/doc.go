// Package crashtest holds logbook's fault tests. They run the real binary
// as a server process and attack it from outside while 50 clients write:
//
//   - kill -9 at random moments, five times, on SQLite and on PostgreSQL:
//     every acknowledged entry is there exactly once, numbering has no gap,
//     counters equal the real counts, no session is stuck;
//   - PostgreSQL connections cut mid-load: the server answers 503 with
//     Retry-After meanwhile, never hangs, recovers by itself, loses nothing;
//   - SQLite on a full disk (a small tmpfs; needs root to mount it): clear
//     503s, reads go on, no corruption, writes work again once space is
//     freed.
//
// The package has test files only. The binary is built once per run from
// the module's cmd/logbook (or taken from LOGBOOK_CRASHTEST_BIN). Figures
// (entries acknowledged, kills survived, errors seen) are logged with -v.
package crashtest
