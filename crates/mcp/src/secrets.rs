//! `${vault:NAME}` in a server's `env`, `headers` and `oauth.client_secret`: the tenant's vault
//! secret of that name, read when the server is started, never stored in the definition.
//!
//! Invariant: a stored definition holds no literal value in those places; a literal given at
//! registration is moved into the tenant's vault (as `mcp-server/<server>/…`) and replaced by
//! its reference before the definition is stored.

use std::collections::HashMap;

use secrecy::ExposeSecret;
use workmate_protocol::TenantId;
use workmate_store::Vault;

use crate::definition::{ServerDef, secret_refs};
use crate::{Error, Result};

/// Where referenced secrets are read.
#[derive(Clone, Debug, Default)]
pub(crate) struct Secrets {
    pub(crate) vault: Option<Vault>,
}

impl Secrets {
    /// The server's environment and headers with every reference replaced.
    pub(crate) async fn resolve(
        &self,
        tenant: &TenantId,
        def: &ServerDef,
    ) -> Result<(Vec<(String, String)>, HashMap<String, String>), String> {
        let mut env = Vec::with_capacity(def.env.len());
        for (name, value) in &def.env {
            env.push((name.clone(), self.fill(tenant, value).await?));
        }
        let mut headers = HashMap::with_capacity(def.headers.len());
        for (name, value) in &def.headers {
            headers.insert(name.clone(), self.fill(tenant, value).await?);
        }
        Ok((env, headers))
    }

    /// `def` with every literal in `env`, `headers` and `oauth.client_secret` moved into the
    /// tenant's vault under server `name`, and replaced by its reference.
    pub(crate) async fn seal(
        &self,
        tenant: &TenantId,
        name: &str,
        def: &ServerDef,
    ) -> Result<ServerDef> {
        let mut sealed = def.clone();
        let mut literals: Vec<(String, &mut String)> = Vec::new();
        for (key, value) in &mut sealed.env {
            literals.push((format!("mcp-server/{name}/env/{}", segment(key)), value));
        }
        for (key, value) in &mut sealed.headers {
            literals.push((format!("mcp-server/{name}/header/{}", segment(key)), value));
        }
        if let Some(secret) = sealed.oauth.as_mut().and_then(|o| o.client_secret.as_mut()) {
            literals.push((format!("mcp-server/{name}/client_secret"), secret));
        }
        for (secret_name, value) in literals {
            if !secret_refs(value).is_empty() {
                continue;
            }
            // A definition read back from the list (values shown as `***`) and sent again keeps
            // the value already kept.
            if value.as_str() == "***" {
                *value = format!("${{vault:{secret_name}}}");
                continue;
            }
            let Some(vault) = &self.vault else {
                return Err(Error::NotAllowed(format!(
                    "the definition holds a literal value ({}) and workmate keeps such values                      only in the vault, which is not configured ([vault]); configure it, or store                      the value with `workmate vault put NAME --tenant {tenant}` and write                      ${{vault:NAME}}",
                    secret_name.rsplit('/').next().unwrap_or_default()
                )));
            };
            vault
                .put(
                    tenant,
                    None,
                    &secret_name,
                    &secrecy::SecretString::from(value.clone()),
                )
                .await?;
            *value = format!("${{vault:{secret_name}}}");
        }
        Ok(sealed)
    }

    pub(crate) async fn fill(&self, tenant: &TenantId, value: &str) -> Result<String, String> {
        let names = secret_refs(value);
        if names.is_empty() {
            return Ok(value.to_owned());
        }
        let Some(vault) = &self.vault else {
            return Err("it refers to vault secrets, but no vault is configured ([vault])".into());
        };
        let mut filled = value.to_owned();
        for name in names {
            let secret = vault
                .get(tenant, None, name)
                .await
                .map_err(|e| format!("cannot read secret {name}: {e}"))?
                .ok_or_else(|| {
                    format!("secret {name} is not in the tenant's vault (workmate vault put {name} --tenant {tenant})")
                })?;
            filled = filled.replace(&format!("${{vault:{name}}}"), secret.expose_secret());
        }
        Ok(filled)
    }
}

/// A name (an environment variable, a header) as a vault name's segment: lower case, with
/// anything but letters, digits, `_`, `-` and `.` as `_`.
fn segment(key: &str) -> String {
    let segment: String = key
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '_',
        })
        .collect();
    if segment.is_empty() {
        "_".into()
    } else {
        segment
    }
}
