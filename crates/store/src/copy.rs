//! A consistent copy of an embedded (SQLite) database, taken while others write to it.
//!
//! Invariant: the copy is one read transaction's view of the database (`VACUUM INTO`), so it
//! holds every transaction committed before it began and none of those after; the writers go on
//! meanwhile (the database runs in WAL mode). Only SQLite has it: a server database is copied
//! with its own tools.

use std::path::Path;

use crate::{Dialect, Error, Result, Store};

impl Store {
    /// Writes a consistent copy of the database into the new file `path`; fails if it exists,
    /// or if the database is not SQLite.
    pub async fn copy_into(&self, path: &Path) -> Result<()> {
        if self.dialect != Dialect::Sqlite {
            return Err(Error::Invalid(
                "only an embedded (SQLite) database is copied by workmate; copy PostgreSQL or \
                 MySQL with their own tools (see docs/operations.md)"
                    .into(),
            ));
        }
        if path.exists() {
            return Err(Error::Invalid(format!("{} exists already", path.display())));
        }
        let target = path
            .to_str()
            .ok_or_else(|| Error::Invalid(format!("{} is not a UTF-8 path", path.display())))?;
        sqlx::query("VACUUM INTO ?")
            .bind(target.to_owned())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
