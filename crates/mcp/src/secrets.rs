//! `${vault:NAME}` in a server's `env` and `headers`: the tenant's vault secret of that name,
//! read when the server is started, never stored in the definition.

use std::collections::HashMap;

use secrecy::ExposeSecret;
use workmate_protocol::TenantId;
use workmate_store::Vault;

use crate::definition::{ServerDef, secret_refs};

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
