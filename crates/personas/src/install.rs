//! Reading a persona bundle from a folder or a git URL.
//!
//! A bundle is a folder holding `manifest.md` (or one `<id>/manifest.md`, or a single `*.md`
//! file) and an optional `skills/<name>/SKILL.md` per skill. What is read is snapshotted into the
//! store, so a later change to the folder or the repository changes nothing until it is installed
//! again.
//!
//! Invariants: nothing outside the bundle is read (symbolic links are refused); a folder, or a
//! `file://` repository, is read only under a root the operator allowed (`[personas]
//! folder_roots`); a clone runs in the exec sandbox (see [`crate::git`]), without prompts, with a
//! time limit, with none of the server's environment, configuration or keys, over https to an
//! address the network policy accepts and is pinned to (ssh only to a host the operator named);
//! every file is size-capped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::git::{GitSandbox, clone};
use crate::skill::{Skill, parse_skill};
use crate::{Error, ManifestError, Result};

/// The largest manifest or `SKILL.md` read.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The most skills one bundle ships.
const MAX_SKILLS: usize = 50;

/// What installing may reach: the operator's network policy and folder roots.
#[derive(Clone, Debug, Default)]
pub struct InstallPolicy {
    /// What a git clone may connect to.
    pub network: std::sync::Arc<workmate_net::NetworkPolicy>,
    /// The folders bundles (and `file://` repositories) may be read from; none by default.
    pub folder_roots: Vec<PathBuf>,
    /// Where git runs: the exec sandbox the server's `[tools] shell_sandbox` names. `None`
    /// (tests and embedders only): as the server's user, with a scrubbed environment.
    pub sandbox: Option<Arc<dyn GitSandbox>>,
}

impl InstallPolicy {
    /// `path` with its links resolved, when it lies under a root; else why not.
    pub(crate) fn admit(&self, path: &Path) -> Result<PathBuf> {
        let real = path
            .canonicalize()
            .map_err(|e| Error::Fetch(format!("cannot read {}: {e}", path.display())))?;
        let roots: Vec<PathBuf> = self
            .folder_roots
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .collect();
        if roots.iter().any(|root| real.starts_with(root)) {
            return Ok(real);
        }
        Err(Error::Refused(format!(
            "{} is not under a folder the operator allows personas to be installed from \
             ([personas] folder_roots{})",
            path.display(),
            if roots.is_empty() { " is empty" } else { "" }
        )))
    }
}

/// Where a persona is installed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstallSource {
    /// A folder (or a single manifest file) on the server.
    Dir(PathBuf),
    /// A git repository, cloned shallowly.
    Git(String),
}

impl InstallSource {
    /// How the source is recorded.
    pub fn describe(&self) -> String {
        match self {
            Self::Dir(path) => path.display().to_string(),
            Self::Git(url) => url.clone(),
        }
    }
}

/// A bundle as read: the manifest's text, the name its id defaults to, and its skills.
#[derive(Clone, Debug)]
pub struct Installed {
    /// The manifest as written.
    pub manifest: String,
    /// The manifest's file stem (or its folder's name for `manifest.md`).
    pub file_stem: String,
    /// The skills the bundle ships.
    pub skills: Vec<Skill>,
    /// Where it came from.
    pub source: String,
}

/// Reads the bundle at `source`.
pub async fn fetch_bundle(source: &InstallSource, policy: &InstallPolicy) -> Result<Installed> {
    match source {
        InstallSource::Dir(path) => {
            let path = policy.admit(path)?;
            let described = source.describe();
            blocking(move || read_bundle(&path, described)).await
        }
        InstallSource::Git(url) => {
            check_git_url(url)?;
            let pin = reach(url, policy).await?;
            let work =
                std::env::temp_dir().join(format!("workmate-persona-{}", uuid::Uuid::now_v7()));
            let read = async {
                let checkout = clone(url, pin.as_deref(), &work, policy).await?;
                let described = url.clone();
                blocking(move || read_bundle(&checkout, described)).await
            }
            .await;
            let _ = std::fs::remove_dir_all(&work);
            read
        }
    }
}

async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| Error::Fetch(format!("reading the bundle stopped: {e}")))?
}

fn check_git_url(url: &str) -> Result<()> {
    let allowed = ["https://", "ssh://", "file://", "git@"];
    if url.starts_with('-') || !allowed.iter().any(|p| url.starts_with(p)) {
        return Err(Error::Refused(format!(
            "{url:?} is not a git URL workmate clones: use https://, ssh://, git@host:path or file://"
        )));
    }
    Ok(())
}

/// Checks where a clone of `url` goes: a `file://` path under a root; an https host at an
/// address the network policy accepts, returned as git's `curloptResolve` pin
/// (`host:port:address`) so git connects to that very address; ssh only to a host the operator
/// named.
async fn reach(url: &str, policy: &InstallPolicy) -> Result<Option<String>> {
    if let Some(path) = url.strip_prefix("file://") {
        policy.admit(Path::new(path))?;
        return Ok(None);
    }
    if url.starts_with("git@") || url.starts_with("ssh://") {
        let host = url
            .trim_start_matches("ssh://")
            .split(['@'])
            .next_back()
            .and_then(|rest| rest.split([':', '/']).next())
            .unwrap_or_default();
        if policy.network.names_host(host) {
            return Ok(None);
        }
        return Err(Error::Refused(format!(
            "cloning over ssh reaches {host:?} with no address check: use an https URL, or an \
             operator can allow the host with [network] allow_private"
        )));
    }
    let parsed = url::Url::parse(url).map_err(|e| Error::Refused(format!("{url:?}: {e}")))?;
    policy
        .network
        .check_url(&parsed, false)
        .map_err(|e| Error::Refused(e.to_string()))?;
    let host = parsed.host_str().unwrap_or_default();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses = workmate_net::resolve_allowed(&policy.network, host)
        .await
        .map_err(|e| Error::Refused(e.to_string()))?;
    let Some(address) = addresses.first() else {
        return Err(Error::Fetch(format!("{host} has no address")));
    };
    let address = match address {
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        std::net::IpAddr::V4(v4) => v4.to_string(),
    };
    Ok(Some(format!("{host}:{port}:{address}")))
}

/// Reads a bundle folder (or a single manifest file).
fn read_bundle(path: &Path, source: String) -> Result<Installed> {
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| Error::Fetch(format!("cannot read {}: {e}", path.display())))?;
    if meta.is_file() {
        return Ok(Installed {
            manifest: read_capped(path)?,
            file_stem: stem(path),
            skills: Vec::new(),
            source,
        });
    }
    if !meta.is_dir() {
        return Err(Error::Fetch(format!(
            "{} is neither a folder nor a manifest file",
            path.display()
        )));
    }
    let (manifest, root) = find_manifest(path)?;
    Ok(Installed {
        manifest: read_capped(&manifest)?,
        file_stem: if manifest.file_name().is_some_and(|n| n == "manifest.md") {
            stem(&root)
        } else {
            stem(&manifest)
        },
        skills: read_skills(&root)?,
        source,
    })
}

/// The manifest file and the folder its `skills/` sit beside.
fn find_manifest(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let direct = dir.join("manifest.md");
    if is_plain_file(&direct) {
        return Ok((direct, dir.to_owned()));
    }
    let mut nested = Vec::new();
    let mut flat = Vec::new();
    for entry in entries(dir)? {
        if is_plain_dir(&entry) && is_plain_file(&entry.join("manifest.md")) {
            nested.push(entry);
        } else if is_plain_file(&entry)
            && entry.extension().is_some_and(|e| e == "md")
            && !entry
                .file_name()
                .is_some_and(|n| n.eq_ignore_ascii_case("README.md"))
        {
            flat.push(entry);
        }
    }
    match (nested.as_slice(), flat.as_slice()) {
        ([one], _) => Ok((one.join("manifest.md"), one.clone())),
        ([], [one]) => Ok((one.clone(), dir.to_owned())),
        ([], []) => Err(Error::Fetch(format!(
            "{} holds no persona: put its manifest in manifest.md",
            dir.display()
        ))),
        _ => Err(Error::Fetch(format!(
            "{} holds more than one persona: install them one folder at a time",
            dir.display()
        ))),
    }
}

fn read_skills(root: &Path) -> Result<Vec<Skill>> {
    let dir = root.join("skills");
    if !is_plain_dir(&dir) {
        return Ok(Vec::new());
    }
    let mut skills = Vec::new();
    for folder in entries(&dir)? {
        let file = folder.join("SKILL.md");
        if !is_plain_dir(&folder) || !is_plain_file(&file) {
            continue;
        }
        let name = stem(&folder);
        let text = read_capped(&file)?;
        let skill =
            parse_skill(&text, &name).map_err(|e| e.in_file(&format!("skills/{name}/SKILL.md")))?;
        skills.push(skill);
        if skills.len() > MAX_SKILLS {
            return Err(Error::Manifest(ManifestError::new(format!(
                "the bundle ships more than {MAX_SKILLS} skills"
            ))));
        }
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(skills)
}

fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = std::fs::read_dir(dir)
        .map_err(|e| Error::Fetch(format!("cannot list {}: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    Ok(paths)
}

fn is_plain_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

fn is_plain_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_capped(path: &Path) -> Result<String> {
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| Error::Fetch(format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(Error::Fetch(format!(
            "{} is a link or not a file; bundles hold plain files only",
            path.display()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Error::Fetch(format!(
            "{} is larger than {} KiB",
            path.display(),
            MAX_FILE_BYTES / 1024
        )));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| Error::Fetch(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes)
        .map_err(|_| Error::Fetch(format!("{} is not UTF-8 text", path.display())))
}
