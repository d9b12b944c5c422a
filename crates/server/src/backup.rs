//! `workmate backup --to FILE` and `workmate restore --from FILE`: an embedded deployment copied
//! while it runs, and put back into an empty data folder.
//!
//! Invariants:
//! - a backup is one zip file: `workmate.db`, one consistent read of the live database (see
//!   [`Store::copy_into`]; the server keeps writing meanwhile), the files of the local object
//!   store under `objects/`, and `manifest.json`: workmate's version, when it was taken, the
//!   schema's migrations, which vault master key ids wrap its secrets and where the current key
//!   comes from (never a key itself), and every object file with its size and SHA-256;
//! - a backup is written under a temporary name beside its target and renamed at the end, so a
//!   file with the final name is always whole;
//! - a restore writes only into a data folder that has no database yet, and only after it has
//!   checked that the configured vault keys open every secret of the backup; it then brings the
//!   schema up to date and verifies every tenant's audit chain, and a failure on the way removes
//!   what it wrote.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use workmate_store::Store;

use crate::config::{Config, VAULT_KEY_ENV};
use crate::error::StartupError;
use crate::{data_dir, database};

/// The database's name inside a backup.
const DATABASE: &str = "workmate.db";
/// The manifest's name inside a backup.
const MANIFEST: &str = "manifest.json";
/// Where the local object store's files go inside a backup, and under the data folder.
const OBJECTS: &str = "objects";
/// The manifest's format.
const FORMAT: u32 = 1;

/// What a backup holds, beside the database.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    workmate_version: String,
    taken_at: String,
    /// The migrations the database had, by name.
    migrations: Vec<String>,
    vault: VaultReference,
    /// The local object store's files (artifacts), relative to `objects/`.
    objects: Vec<ObjectFile>,
}

/// Which master keys the backup's secrets need: ids only, never a key.
#[derive(Debug, Serialize, Deserialize)]
struct VaultReference {
    /// Where the current key came from when the backup was taken (`[vault] key_file …`, the
    /// environment variable), if one was configured.
    current_key_source: Option<String>,
    /// The current key's id, if one was configured.
    current_key_id: Option<String>,
    /// Per key id, how many secrets it wraps.
    secrets_by_key: Vec<(String, u64)>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ObjectFile {
    path: String,
    size: u64,
    sha256: String,
}

fn failed(what: &str, e: impl std::fmt::Display) -> StartupError {
    StartupError::Backup(format!("{what}: {e}"))
}

/// `workmate backup --to FILE`: copies the configured embedded deployment into `to`.
pub(crate) async fn backup(config: &Config, to: &Path) -> Result<String, StartupError> {
    if to.exists() {
        return Err(StartupError::Backup(format!(
            "{} exists already; name a new file",
            to.display()
        )));
    }
    if let Some(file) = workmate_store::sqlite_file(config.database.url.expose())
        && !file.exists()
    {
        return Err(StartupError::Backup(format!(
            "there is no database at {}: nothing to back up (is the data folder right?)",
            file.display()
        )));
    }
    let store = database::open(config).await?;
    let written = write_backup(config, &store, to).await;
    store.close().await;
    let manifest = written?;
    Ok(format!(
        "backup written to {}: database at migration {}, {} secret(s) under key id(s) {}, {} \
         object file(s)\n",
        to.display(),
        manifest.migrations.last().map_or("none", String::as_str),
        manifest
            .vault
            .secrets_by_key
            .iter()
            .map(|(_, n)| n)
            .sum::<u64>(),
        key_ids(&manifest.vault),
        manifest.objects.len()
    ))
}

async fn write_backup(config: &Config, store: &Store, to: &Path) -> Result<Manifest, StartupError> {
    let partial = to.with_extension("partial");
    let copy = to.with_extension("db-copy");
    for leftover in [&partial, &copy] {
        // Left by an earlier backup that was killed; nobody else writes these names.
        let _ = std::fs::remove_file(leftover);
    }
    let outcome = async {
        store
            .copy_into(&copy)
            .await
            .map_err(|e| failed("cannot copy the database", e))?;
        let manifest = Manifest {
            format: FORMAT,
            workmate_version: env!("CARGO_PKG_VERSION").to_owned(),
            taken_at: chrono::Utc::now().to_rfc3339(),
            migrations: applied_migrations(&copy).await?,
            vault: vault_reference(config, store).await?,
            objects: object_files(&config.server.data_dir.join(OBJECTS))?,
        };
        write_zip(&partial, &copy, &config.server.data_dir, &manifest)?;
        std::fs::rename(&partial, to).map_err(|e| failed("cannot name the backup", e))?;
        Ok(manifest)
    }
    .await;
    let _ = std::fs::remove_file(&copy);
    if outcome.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    outcome
}

/// The migrations the copied database has, by name, read from the copy.
async fn applied_migrations(copy: &Path) -> Result<Vec<String>, StartupError> {
    let url = format!("sqlite://{}", copy.display());
    let store = Store::connect(&url, workmate_store::ConnectOptions::default())
        .await
        .map_err(|e| failed("cannot open the copy", e))?;
    let pending = store.pending_migrations().await;
    store.close().await;
    let pending = pending.map_err(|e| failed("cannot read the copy's schema", e))?;
    Ok(workmate_store::migration_names()
        .filter(|name| !pending.contains(name))
        .map(str::to_owned)
        .collect())
}

async fn vault_reference(config: &Config, store: &Store) -> Result<VaultReference, StartupError> {
    let secrets_by_key = store
        .secrets()
        .count_by_key()
        .await
        .map_err(StartupError::Store)?;
    let ring = config
        .vault
        .keyring()
        .map_err(|e| StartupError::VaultKeys(e.to_string()))?;
    Ok(VaultReference {
        current_key_source: config.vault.key_source(),
        current_key_id: ring.as_ref().map(|r| {
            use workmate_vault::KeyProvider;
            r.key_id().to_owned()
        }),
        secrets_by_key,
    })
}

/// Every file under `root`, with its size and SHA-256; none when it does not exist.
fn object_files(root: &Path) -> Result<Vec<ObjectFile>, StartupError> {
    let mut files = Vec::new();
    if !root.is_dir() {
        return Ok(files);
    }
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|e| failed("cannot list objects", e))?;
        for entry in entries {
            let path = entry.map_err(|e| failed("cannot list objects", e))?.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let mut hash = Sha256::new();
            let mut reader =
                BufReader::new(File::open(&path).map_err(|e| failed("cannot read an object", e))?);
            let size = std::io::copy(&mut reader, &mut HashWriter(&mut hash))
                .map_err(|e| failed("cannot read an object", e))?;
            let relative = path.strip_prefix(root).unwrap_or(&path);
            files.push(ObjectFile {
                path: relative.to_string_lossy().replace('\\', "/"),
                size,
                sha256: hex::encode(hash.finalize()),
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Feeds what is written into a hash.
struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn write_zip(
    to: &Path,
    database: &Path,
    data_dir: &Path,
    manifest: &Manifest,
) -> Result<(), StartupError> {
    let file = File::create(to).map_err(|e| failed("cannot create the backup", e))?;
    let mut zip = zip::ZipWriter::new(BufWriter::new(file));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    let mut add = |name: &str, source: &Path| -> Result<(), StartupError> {
        zip.start_file(name, options)
            .map_err(|e| failed("cannot write the backup", e))?;
        let mut reader = BufReader::new(File::open(source).map_err(|e| failed("cannot read", e))?);
        std::io::copy(&mut reader, &mut zip).map_err(|e| failed("cannot write the backup", e))?;
        Ok(())
    };
    add(DATABASE, database)?;
    for object in &manifest.objects {
        let source = data_dir.join(OBJECTS).join(&object.path);
        add(&format!("{OBJECTS}/{}", object.path), &source)?;
    }
    zip.start_file(MANIFEST, options)
        .map_err(|e| failed("cannot write the backup", e))?;
    let text = serde_json::to_vec_pretty(manifest).map_err(|e| failed("cannot write", e))?;
    zip.write_all(&text)
        .map_err(|e| failed("cannot write the backup", e))?;
    let mut inner = zip
        .finish()
        .map_err(|e| failed("cannot finish the backup", e))?;
    inner
        .flush()
        .map_err(|e| failed("cannot finish the backup", e))?;
    inner
        .get_ref()
        .sync_all()
        .map_err(|e| failed("cannot finish the backup", e))
}

fn key_ids(vault: &VaultReference) -> String {
    if vault.secrets_by_key.is_empty() {
        return "(none)".to_owned();
    }
    vault
        .secrets_by_key
        .iter()
        .map(|(id, _)| id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `workmate restore --from FILE`: puts a backup into the configured, empty, data folder and
/// checks the result.
pub(crate) async fn restore(config: &Config, from: &Path) -> Result<String, StartupError> {
    let database = workmate_store::sqlite_file(config.database.url.expose()).ok_or_else(|| {
        StartupError::Backup(
            "restore goes into an embedded (SQLite) database; restore PostgreSQL or MySQL with \
             their own tools (see docs/operations.md)"
                .into(),
        )
    })?;
    let objects = config.server.data_dir.join(OBJECTS);
    if database.exists() || objects.exists() {
        return Err(StartupError::Backup(format!(
            "{} already holds a deployment; restore into an empty data folder (move it away \
             first)",
            config.server.data_dir.display()
        )));
    }
    let file =
        File::open(from).map_err(|e| failed(&format!("cannot open {}", from.display()), e))?;
    let mut zip = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| failed(&format!("{} is not a workmate backup", from.display()), e))?;
    let manifest: Manifest = {
        let mut text = String::new();
        zip.by_name(MANIFEST)
            .map_err(|e| failed("the backup has no manifest", e))?
            .read_to_string(&mut text)
            .map_err(|e| failed("cannot read the manifest", e))?;
        serde_json::from_str(&text).map_err(|e| failed("the manifest is unreadable", e))?
    };
    if manifest.format != FORMAT {
        return Err(StartupError::Backup(format!(
            "the backup's format {} is not one this workmate reads ({FORMAT})",
            manifest.format
        )));
    }
    check_keys(config, &manifest.vault)?;
    data_dir::prepare(&config.server.data_dir)?;
    let outcome = unpack_and_check(config, &mut zip, &manifest, &database, &objects).await;
    if outcome.is_err() {
        let _ = std::fs::remove_file(&database);
        let _ = std::fs::remove_dir_all(&objects);
    }
    outcome
}

/// Refuses a restore whose secrets the configured vault keys cannot open.
fn check_keys(config: &Config, vault: &VaultReference) -> Result<(), StartupError> {
    if vault.secrets_by_key.is_empty() {
        return Ok(());
    }
    let ring = config
        .vault
        .keyring()
        .map_err(|e| StartupError::VaultKeys(e.to_string()))?;
    let missing: Vec<&str> = vault
        .secrets_by_key
        .iter()
        .map(|(id, _)| id.as_str())
        .filter(|id| {
            ring.as_ref().is_none_or(|r| {
                use workmate_vault::KeyProvider;
                !r.has_key(id)
            })
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(StartupError::VaultKeys(format!(
        "the backup's secrets are wrapped with master key id(s) {} (the backup was taken with \
         the key from {}); configure that key ([vault] key_file or {VAULT_KEY_ENV}, or \
         previous_key_files) before restoring, or its secrets cannot be read",
        missing.join(", "),
        vault
            .current_key_source
            .as_deref()
            .unwrap_or("no configured source")
    )))
}

async fn unpack_and_check<R: Read + std::io::Seek>(
    config: &Config,
    zip: &mut zip::ZipArchive<R>,
    manifest: &Manifest,
    database: &Path,
    objects: &Path,
) -> Result<String, StartupError> {
    unpack(zip, DATABASE, database)?;
    for object in &manifest.objects {
        let target = safe_join(objects, &object.path)?;
        unpack(zip, &format!("{OBJECTS}/{}", object.path), &target)?;
        let mut hash = Sha256::new();
        let mut reader = BufReader::new(File::open(&target).map_err(|e| failed("cannot read", e))?);
        std::io::copy(&mut reader, &mut HashWriter(&mut hash))
            .map_err(|e| failed("cannot read", e))?;
        if hex::encode(hash.finalize()) != object.sha256 {
            return Err(StartupError::Backup(format!(
                "object {} does not match the manifest: the backup is damaged",
                object.path
            )));
        }
    }
    let store = database::open(config).await?;
    let migrated = database::migrate(&store, config).await;
    let verified = match migrated {
        Ok(_) => crate::audit::verify_all(&store).await,
        Err(e) => Err(e),
    };
    store.close().await;
    let audit = verified?;
    Ok(format!(
        "restored the backup of {} (workmate {}) into {}: {} object file(s); the schema is up \
         to date\n{audit}",
        manifest.taken_at,
        manifest.workmate_version,
        config.server.data_dir.display(),
        manifest.objects.len()
    ))
}

/// `root` joined with a manifest's relative `path`, refused if it would leave `root`.
fn safe_join(root: &Path, path: &str) -> Result<PathBuf, StartupError> {
    let relative = Path::new(path);
    let plain = relative.components().next().is_some()
        && relative
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain {
        return Err(StartupError::Backup(format!(
            "the backup names the object {path:?}, outside the object store"
        )));
    }
    Ok(root.join(relative))
}

/// Writes the backup's entry `name` to the new file `to`.
fn unpack<R: Read + std::io::Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    to: &Path,
) -> Result<(), StartupError> {
    let mut entry = zip
        .by_name(name)
        .map_err(|e| failed(&format!("the backup has no {name}"), e))?;
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| failed("cannot create a folder", e))?;
    }
    let mut out = BufWriter::new(
        File::options()
            .write(true)
            .create_new(true)
            .open(to)
            .map_err(|e| failed(&format!("cannot create {}", to.display()), e))?,
    );
    std::io::copy(&mut entry, &mut out).map_err(|e| failed(&format!("cannot write {name}"), e))?;
    out.flush()
        .map_err(|e| failed(&format!("cannot write {name}"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_cannot_name_an_object_outside_the_object_store() {
        let root = Path::new("/srv/workmate/data/objects");
        assert_eq!(
            safe_join(root, "default/s1/a1/report.md").unwrap(),
            root.join("default/s1/a1/report.md")
        );
        for hostile in [
            "../workmate.db",
            "/etc/passwd",
            "a/../../admin_token",
            "./x",
            "",
        ] {
            assert!(safe_join(root, hostile).is_err(), "{hostile:?}");
        }
    }
}
