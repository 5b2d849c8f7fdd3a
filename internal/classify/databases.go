package classify

import "strings"

// Database clients: SQL shells, Redis, MongoDB. The statements they are
// given decide; without statements a client is interactive and unknown.

// databasePrograms registers the database clients.
func databasePrograms(r *registry) {
	r.handle(sqlClientCmd, "psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "clickhouse-client", "clickhouse",
		"cockroach", "cqlsh", "usql", "pgcli", "mycli", "litecli", "trino", "presto", "spark-sql", "hive", "beeline",
		"sqlcmd", "snowsql", "mongosh-sql")
	r.fixed(Destructive, map[string]string{
		"dropdb": "drops a PostgreSQL database", "dropuser": "drops a PostgreSQL role",
		"droplang": "drops a PostgreSQL language",
	})
	r.fixed(ConfigMutation, map[string]string{"createdb": "creates a PostgreSQL database", "mongoimport": "imports documents into MongoDB"})
	r.fixed(Privilege, map[string]string{"createuser": "creates a PostgreSQL role"})
	// flyway clean and atlas schema clean drop every object in the schema.
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{"clean": Destructive}), "flyway", "atlas")
	r.handle(dumpCmd, "pg_dump", "pg_dumpall", "mysqldump", "mariadb-dump", "mongodump", "mongoexport")
	r.handle(pgRestoreCmd, "pg_restore", "mongorestore")
	r.handle(mysqladminCmd, "mysqladmin", "mariadb-admin")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", nil), "influx", "etcdctl", "consul", "bq", "cbq", "migrate", "dbmate", "liquibase", "goose", "sqlx", "alembic", "knex", "sequelize", "prisma", "typeorm", "diesel", "sqitch")
	r.handle(redisCmd, "redis-cli", "valkey-cli", "keydb-cli")
	r.handle(mongoCmd, "mongosh", "mongo")
}

// sqlClientCmd: psql -c, mysql -e, sqlite3 DB 'SQL': the statements decide.
// Without statements the client is interactive or reads a file: unknown.
func sqlClientCmd(_ *state, c command) judgement {
	valued := "-c --command -e --execute -f --file -h --host -p --port -U --username -u --user -d --dbname -D --database -P --password -S --socket -o --output -v --set -cmd -init -separator"
	switch c.name {
	case "clickhouse-client", "clickhouse", "sqlcmd", "snowsql", "trino", "presto", "usql", "cqlsh":
		valued += " -q --query -Q"
	}
	o := scanOptions(c.args, scanSpec{valued: valued})
	var sql []string
	for _, op := range o.opts {
		switch op.name {
		case "-c", "--command", "-cmd":
			sql = append(sql, op.value)
		case "-e", "--execute":
			if c.name != "sqlite3" {
				sql = append(sql, op.value)
			}
		case "-q", "--query", "-Q":
			switch c.name {
			case "clickhouse-client", "clickhouse", "sqlcmd", "snowsql", "trino", "presto", "usql", "cqlsh":
				sql = append(sql, op.value)
			}
		}
	}
	if (c.name == "sqlite3" || c.name == "sqlite" || c.name == "duckdb") && len(o.operands) > 1 {
		for _, op := range o.operands[1:] {
			sql = append(sql, op.text)
		}
	}
	if len(sql) == 0 {
		if o.has("-l", "--list", "--version", "-V", "--help") {
			return is(ReadOnly, c.name+" lists databases or prints its version")
		}
		if c.in.kind == fromText {
			sql = append(sql, c.in.text)
		} else {
			return is(Unknown, c.name+" runs statements logbook cannot see (interactive, from a file or from input)")
		}
	}
	j := is(ReadOnly, c.name+" runs read-only statements")
	for _, s := range sql {
		if k := judgeSQL(c.name, s); k.class.Rank() > j.class.Rank() {
			j = k
		}
	}
	return j
}

// judgeSQL classifies SQL statements by their first keyword. A DELETE or
// UPDATE without WHERE touches every row, so it is destructive.
func judgeSQL(prog, sql string) judgement {
	j := is(ReadOnly, prog+" runs read-only statements")
	for _, stmt := range strings.Split(sql, ";") {
		words := strings.Fields(strings.ToUpper(stmt))
		if len(words) == 0 {
			continue
		}
		k := is(ReadOnly, "")
		first := words[0]
		hasWhere := false
		for _, w := range words {
			if w == "WHERE" {
				hasWhere = true
			}
		}
		switch {
		case first == "DROP" || first == "TRUNCATE":
			k = is(Destructive, prog+" runs "+first+", which deletes data")
		case (first == "DELETE" || first == "UPDATE") && !hasWhere:
			k = is(Destructive, prog+" runs "+first+" without WHERE, which changes every row")
		case first == "DELETE" || first == "UPDATE" || first == "INSERT" || first == "REPLACE" || first == "MERGE" || first == "UPSERT" || first == "COPY" || first == "LOAD":
			k = is(ConfigMutation, prog+" runs "+first+", which changes data")
		case first == "CREATE" || first == "ALTER" || first == "RENAME" || first == "COMMENT" || first == "VACUUM" || first == "REINDEX" || first == "CLUSTER" || first == "ATTACH" || first == "DETACH" || first == "PRAGMA" && strings.Contains(stmt, "="):
			k = is(ConfigMutation, prog+" runs "+first+", which changes the schema or storage")
		case first == "GRANT" || first == "REVOKE" || strings.HasPrefix(first, "ALTER") && len(words) > 1 && (words[1] == "USER" || words[1] == "ROLE"):
			k = is(Privilege, prog+" runs "+first+", which changes database permissions")
		case strings.HasPrefix(first, `\!`) || first == ".SHELL" || first == ".SYSTEM":
			k = is(Unknown, prog+" runs a shell command from its prompt")
		case first == "SELECT" || first == "SHOW" || first == "EXPLAIN" || first == "WITH" || first == "VALUES" || first == "TABLE" || first == "DESCRIBE" || first == "DESC" || first == "PRAGMA" || first == "BEGIN" || first == "COMMIT" || first == "ROLLBACK" || first == "SET" || first == "USE" || strings.HasPrefix(first, `\`) || strings.HasPrefix(first, "."):
			k = is(ReadOnly, "")
		default:
			k = is(Unknown, prog+" runs "+first+", which logbook does not know")
		}
		if k.class.Rank() > j.class.Rank() {
			j = k
		}
	}
	return j
}

// redisCommands classifies redis-cli commands.
var redisCommands = map[string]Class{
	"FLUSHALL": Destructive, "FLUSHDB": Destructive, "SHUTDOWN": ServiceControl, "DEBUG": Unknown,
	"EVAL": Unknown, "EVALSHA": Unknown, "FCALL": Unknown, "MODULE": PackageInstall, "SCRIPT": Unknown,
	"CONFIG": ConfigMutation, "ACL": Privilege, "REPLICAOF": ConfigMutation, "SLAVEOF": ConfigMutation,
	"CLUSTER": ConfigMutation, "BGREWRITEAOF": ConfigMutation, "SAVE": ConfigMutation, "BGSAVE": ConfigMutation,
	"MIGRATE": ConfigMutation, "SWAPDB": Destructive, "CLIENT": ServiceControl, "FAILOVER": ServiceControl,
}

// redisCmd: redis-cli [options] COMMAND ARGS. Read commands (GET, KEYS,
// INFO...) read; other data commands change data.
func redisCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-h -p -s -a --user --pass -u -n -r -i -d -D --tls --cacert --cert --key --sni --eval --pattern --count --rdb --functions-rdb"})
	if o.has("--eval") {
		return is(Unknown, "redis-cli --eval runs a Lua script")
	}
	if len(o.operands) == 0 {
		if o.has("--scan", "--bigkeys", "--memkeys", "--hotkeys", "--stat", "--latency", "--version", "--help") {
			return is(ReadOnly, "redis-cli only reads")
		}
		return is(Unknown, "redis-cli without a command is interactive or reads commands from input")
	}
	cmd := strings.ToUpper(o.operands[0].text)
	if cl, ok := redisCommands[cmd]; ok {
		if cmd == "CONFIG" && len(o.operands) > 1 && strings.EqualFold(o.operands[1].text, "GET") {
			return is(ReadOnly, "redis-cli CONFIG GET only reads")
		}
		return is(cl, "redis-cli "+cmd+" "+verbRule(cl))
	}
	switch {
	case strings.HasPrefix(cmd, "GET") || strings.HasPrefix(cmd, "H") && (strings.HasSuffix(cmd, "GET") || strings.HasSuffix(cmd, "GETALL") || cmd == "HKEYS" || cmd == "HLEN" || cmd == "HEXISTS" || cmd == "HSCAN" || cmd == "HVALS") ||
		cmd == "KEYS" || cmd == "SCAN" || cmd == "INFO" || cmd == "TTL" || cmd == "PTTL" || cmd == "TYPE" || cmd == "EXISTS" ||
		cmd == "PING" || cmd == "DBSIZE" || cmd == "MGET" || cmd == "STRLEN" || cmd == "LRANGE" || cmd == "LLEN" ||
		cmd == "SMEMBERS" || cmd == "SCARD" || cmd == "ZRANGE" || cmd == "ZCARD" || cmd == "ZSCORE" || cmd == "MONITOR" ||
		cmd == "SLOWLOG" || cmd == "MEMORY" || cmd == "OBJECT" || cmd == "TIME" || cmd == "ECHO" || cmd == "LASTSAVE" ||
		cmd == "ROLE" || cmd == "XRANGE" || cmd == "XLEN" || cmd == "XINFO" || cmd == "SISMEMBER" || cmd == "COMMAND":
		return is(ReadOnly, "redis-cli "+cmd+" only reads")
	}
	return is(ConfigMutation, "redis-cli "+cmd+" changes data")
}

// mongoCmd: mongosh --eval CODE; dropping or mass-deleting is destructive.
func mongoCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "--eval --host --port -u --username -p --password --authenticationDatabase -f --file"})
	code, ok := o.value("--eval")
	if !ok {
		return is(Unknown, c.name+" runs statements logbook cannot see")
	}
	for _, bad := range []string{"dropDatabase", ".drop(", "deleteMany", ".remove(", "dropIndexes", "dropUser", "dropAllUsers"} {
		if strings.Contains(code, bad) {
			return is(Destructive, c.name+" --eval calls "+strings.Trim(bad, ".(")+", which deletes data")
		}
	}
	return is(Unknown, c.name+" --eval runs JavaScript logbook does not read")
}

// dumpCmd: database dumps print the data, or write it to the file named
// by -f, --file, --result-file, -o or --out.
func dumpCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-f --file -r --result-file -o --out -h --host -p --port -U --username -u --user -d --dbname --db -c --collection -t --table -n --schema -F --format"})
	if out, ok := o.value("-f", "--file", "-r", "--result-file", "-o", "--out"); ok && out != "-" {
		return writeTargets(st, c.name+" writes a dump to", []arg{lit(out)})
	}
	return is(ReadOnly, c.name+" prints a dump of the database")
}

// pgRestoreCmd: pg_restore -c / --clean and mongorestore --drop drop what
// they restore over; restoring into a database changes it; pg_restore
// without a database only prints SQL.
func pgRestoreCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-d --dbname -h --host -p --port -U --username -f --file -n --schema -t --table -j --jobs --uri --db --nsInclude --nsFrom --nsTo"})
	switch {
	case o.has("-c", "--clean", "--drop"):
		return is(Destructive, c.name+" drops the objects it restores over")
	case c.name == "pg_restore" && !o.has("-d", "--dbname"):
		return is(ReadOnly, "pg_restore without a database prints the SQL it would run")
	}
	return is(ConfigMutation, c.name+" restores data into a database")
}

// mysqladminCmd: drop deletes a database, create makes one, shutdown
// stops the server, flush-* and reload reset caches; the rest reads.
func mysqladminCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-h --host -P --port -u --user -S --socket --defaults-file -i --sleep -c --count"})
	for _, op := range o.operands {
		switch w := strings.ToLower(op.text); {
		case w == "drop":
			return is(Destructive, c.name+" drop deletes a database")
		case w == "shutdown" || w == "stop-replica" || w == "start-replica" || w == "stop-slave" || w == "start-slave" || w == "kill":
			return is(ServiceControl, c.name+" "+w+" stops or starts the server or its threads")
		case w == "create" || w == "password" || w == "old-password" || strings.HasPrefix(w, "flush") || w == "reload" || w == "refresh":
			return is(ConfigMutation, c.name+" "+w+" changes the server")
		}
	}
	return is(ReadOnly, c.name+" shows the server's status")
}
