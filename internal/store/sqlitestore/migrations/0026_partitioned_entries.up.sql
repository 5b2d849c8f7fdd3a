-- PostgreSQL partitions entries by the month of their session (its
-- migration 0026). SQLite keeps one table: one file on one machine, whose
-- retention deletes rows; this step only keeps the versions of both
-- engines in step.
SELECT 1;
