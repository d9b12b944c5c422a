//! A person's (or, where an admin set one, the tenant's) credentials for a connector, kept in
//! the vault as `connector/<name>`: a JSON object of the connector's fields, or a bare token.
//!
//! Invariants: a person's own credentials win over the tenant's; values never leave this module
//! except as the request's authentication; nothing of them is logged.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};
use workmate_protocol::{TenantId, UserId};
use workmate_store::Vault;

/// The vault name of a connector's credentials.
pub fn secret_name(connector: &str) -> String {
    format!("connector/{connector}")
}

/// Whose credentials a call uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The caller's own.
    User,
    /// The tenant's, set by an admin.
    Tenant,
}

/// Credentials for one connector.
pub struct Credentials {
    fields: BTreeMap<String, SecretString>,
    /// Whose they are.
    pub owner: Owner,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("fields", &self.fields.keys().collect::<Vec<_>>())
            .field("owner", &self.owner)
            .finish()
    }
}

impl Credentials {
    /// Reads a stored value: a JSON object of string fields, or a bare token (as `token`).
    pub fn parse(value: &SecretString, owner: Owner) -> Self {
        let text = value.expose_secret().trim();
        let fields = match serde_json::from_str::<BTreeMap<String, serde_json::Value>>(text) {
            Ok(map) => map
                .into_iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k, SecretString::from(s.to_owned()))))
                .collect(),
            Err(_) => BTreeMap::from([("token".to_owned(), SecretString::from(text.to_owned()))]),
        };
        Self { fields, owner }
    }

    /// Credentials made of `fields` (tests, the connect form).
    pub fn from_fields<'a>(
        fields: impl IntoIterator<Item = (&'a str, &'a str)>,
        owner: Owner,
    ) -> Self {
        Self {
            fields: fields
                .into_iter()
                .map(|(k, v)| (k.to_owned(), SecretString::from(v.to_owned())))
                .collect(),
            owner,
        }
    }

    /// The field `key`, if given and not blank.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .map(|v| v.expose_secret().trim())
            .filter(|v| !v.is_empty())
    }

    /// The field `key`, or an error naming it.
    pub fn require(&self, connector: &str, key: &str) -> Result<&str, String> {
        self.get(key).ok_or_else(|| {
            format!("the {connector} credentials have no `{key}`: connect {connector} again (/workmate connectors {connector})")
        })
    }
}

/// Reads credentials from the vault.
#[derive(Clone, Debug)]
pub struct CredentialStore {
    vault: Vault,
}

impl CredentialStore {
    /// Credentials kept in `vault`.
    pub fn new(vault: Vault) -> Self {
        Self { vault }
    }

    /// The vault they are kept in.
    pub(crate) fn vault(&self) -> &Vault {
        &self.vault
    }

    /// The caller's credentials for `connector`, else the tenant's, else `None`.
    pub async fn lookup(
        &self,
        tenant: &TenantId,
        user: &UserId,
        connector: &str,
    ) -> Result<Option<Credentials>, String> {
        let name = secret_name(connector);
        for (owner, who) in [(Some(user), Owner::User), (None, Owner::Tenant)] {
            let value = self
                .vault
                .get(tenant, owner, &name)
                .await
                .map_err(|e| format!("cannot read the {connector} credentials: {e}"))?;
            if let Some(value) = value {
                return Ok(Some(Credentials::parse(&value, who)));
            }
        }
        Ok(None)
    }

    /// The connectors the caller has credentials for (their own, or the tenant's), by name.
    pub async fn connected(
        &self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<(String, Owner)>, String> {
        let mut out: Vec<(String, Owner)> = Vec::new();
        for (owner, who) in [(Some(user), Owner::User), (None, Owner::Tenant)] {
            let names = self
                .vault
                .list_names(tenant, owner)
                .await
                .map_err(|e| format!("cannot list connected connectors: {e}"))?;
            for name in names {
                if let Some(connector) = name.as_str().strip_prefix("connector/")
                    && !out.iter().any(|(c, _)| c == connector)
                {
                    out.push((connector.to_owned(), who));
                }
            }
        }
        Ok(out)
    }
}
