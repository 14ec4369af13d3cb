// Telling SQLite's constraint failures from bugs.
import Database from 'better-sqlite3';

/** True for a UNIQUE (or primary key) clash: a client conflict, not a bug. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    error instanceof Database.SqliteError && (error.code === 'SQLITE_CONSTRAINT_UNIQUE' || error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
  );
}
