//! A connector's tool as one of workmate's: its credentials are looked up for the person the call
//! acts for, at call time.

use std::sync::Arc;

use workmate_protocol::ToolSpec;
use workmate_tools::{Tool, ToolContext, ToolError, ToolFuture, ToolMetadata};

use crate::{Connector, CredentialStore, Http, ToolDef};

/// One tool of one connector.
#[derive(Debug)]
pub(crate) struct ConnectorTool {
    pub(crate) connector: Arc<dyn Connector>,
    pub(crate) def: ToolDef,
    pub(crate) credentials: CredentialStore,
    pub(crate) http: Http,
}

impl Tool for ConnectorTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.def.name.to_owned(),
            description: format!(
                "[{}] {}",
                self.connector.descriptor().title,
                self.def.description
            ),
            parameters: self.def.parameters.clone(),
        }
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        Some(self.def.metadata())
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let name = self.connector.descriptor().name;
            let credentials = self
                .credentials
                .lookup(&ctx.tenant_id, &ctx.user_id, name)
                .await
                .map_err(ToolError::new)?
                .ok_or_else(|| {
                    ToolError::new(format!(
                        "{} is not connected for {}: they connect it with /workmate connectors {name}",
                        self.connector.descriptor().title,
                        ctx.user_id
                    ))
                })?;
            let call = self
                .connector
                .call(&self.http, &credentials, self.def.name, arguments);
            tokio::select! {
                result = call => result,
                () = ctx.cancel.cancelled() => Err(ToolError::new("interrupted by user")),
            }
        })
    }
}
