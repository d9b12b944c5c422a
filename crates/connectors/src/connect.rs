//! Connecting and disconnecting: what a person (or an admin, for the whole tenant) stores for a
//! connector, checked against its connect form, and what each person has connected.
//!
//! Invariants: only a connector's own fields are stored, its required ones never blank, and at
//! least one secret among them; a change shows in the person's next turn (their cached list of
//! connected connectors is dropped); values never appear in an error or a log.

use std::collections::BTreeMap;
use std::sync::PoisonError;

use secrecy::SecretString;
use workmate_protocol::{TenantId, UserId};

use crate::{ConnectorSource, Descriptor, Owner, secret_name};

/// One connector and whether the person has it connected (and whose credentials they are).
#[derive(Clone, Debug)]
pub struct ConnectorStatus {
    /// The connector.
    pub descriptor: Descriptor,
    /// `Some(Owner::User)` when the person connected it, `Some(Owner::Tenant)` when an admin did
    /// for everyone, `None` when it is not connected.
    pub connected: Option<Owner>,
}

impl ConnectorSource {
    /// The descriptors of every connector, in the order they are listed.
    pub fn descriptors(&self) -> Vec<&Descriptor> {
        self.connectors.iter().map(|c| c.descriptor()).collect()
    }

    /// The connector named `name`.
    pub fn descriptor(&self, name: &str) -> Option<&Descriptor> {
        self.descriptors().into_iter().find(|d| d.name == name)
    }

    /// Every connector and whether `user` has it connected.
    pub async fn status(
        &self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<ConnectorStatus>, String> {
        let connected = self.credentials.connected(tenant, user).await?;
        Ok(self
            .descriptors()
            .into_iter()
            .map(|d| ConnectorStatus {
                descriptor: d.clone(),
                connected: connected
                    .iter()
                    .find(|(name, _)| name == d.name)
                    .map(|(_, owner)| *owner),
            })
            .collect())
    }

    /// Stores `fields` as `owner`'s credentials for `connector` (`owner: None`: the tenant's),
    /// replacing what was there; `true` when there was nothing.
    pub async fn connect(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        connector: &str,
        fields: &BTreeMap<String, String>,
    ) -> Result<bool, String> {
        let descriptor = self
            .descriptor(connector)
            .ok_or_else(|| format!("there is no connector `{connector}`"))?;
        let value = checked(descriptor, fields)?;
        self.store(tenant, owner, connector, value).await
    }

    /// Stores `fields` as they are (what an OAuth sign-in granted) as `owner`'s credentials for
    /// `connector`; `true` when there was nothing.
    pub async fn store(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        connector: &str,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> Result<bool, String> {
        let value = serde_json::Value::Object(fields).to_string();
        let created = self
            .credentials
            .vault()
            .put(
                tenant,
                owner,
                &secret_name(connector),
                &SecretString::from(value),
            )
            .await
            .map_err(|e| format!("cannot store the {connector} credentials: {e}"))?;
        self.forget(tenant, owner);
        Ok(created)
    }

    /// Removes `owner`'s credentials for `connector` (`owner: None`: the tenant's); `true` when
    /// there were some.
    pub async fn disconnect(
        &self,
        tenant: &TenantId,
        owner: Option<&UserId>,
        connector: &str,
    ) -> Result<bool, String> {
        let removed = self
            .credentials
            .vault()
            .delete(tenant, owner, &secret_name(connector))
            .await
            .map_err(|e| format!("cannot remove the {connector} credentials: {e}"))?;
        self.forget(tenant, owner);
        Ok(removed)
    }

    /// Drops cached lists of connected connectors: `owner`'s, or the whole tenant's.
    fn forget(&self, tenant: &TenantId, owner: Option<&UserId>) {
        let mut cache = self
            .connected
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cache.retain(|(t, u), _| t != tenant || owner.is_some_and(|o| o != u));
    }
}

/// `fields` as the stored JSON, or why they do not fit `descriptor`'s form.
fn checked(
    descriptor: &Descriptor,
    fields: &BTreeMap<String, String>,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut stored = serde_json::Map::new();
    for (key, value) in fields {
        let Some(field) = descriptor.fields.iter().find(|f| f.key == key) else {
            let known: Vec<&str> = descriptor.fields.iter().map(|f| f.key).collect();
            return Err(format!(
                "{} has no field `{key}`; its fields are {}",
                descriptor.title,
                known.join(", ")
            ));
        };
        let value = value.trim();
        if !value.is_empty() {
            stored.insert(field.key.to_owned(), value.into());
        }
    }
    for field in descriptor.fields.iter().filter(|f| f.required) {
        if !stored.contains_key(field.key) {
            return Err(format!(
                "{} needs `{}` ({})",
                descriptor.title, field.key, field.label
            ));
        }
    }
    if !descriptor
        .fields
        .iter()
        .any(|f| f.secret && stored.contains_key(f.key))
    {
        let secrets: Vec<&str> = descriptor
            .fields
            .iter()
            .filter(|f| f.secret)
            .map(|f| f.label)
            .collect();
        return Err(format!(
            "{} needs a credential: {}",
            descriptor.title,
            secrets.join(" or ")
        ));
    }
    Ok(stored)
}
