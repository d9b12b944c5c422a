//! `workmate serve` (and `workmate demo`): the startup sequence and the server's lifetime.
//!
//! Invariant: checks run cheapest-and-config-class first (the script is parsed, the listener
//! bound, the data directory checked, before anything is created), so a bad configuration creates
//! nothing; after a stop signal, event streams end, in-flight requests get at most the grace
//! period, running turns are stopped and joined, then the pool is closed.

use std::future::IntoFuture;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tracing::{error, info, warn};
use workmate_chat::{Chat, ChatConfig};
use workmate_engine::{Scheduler, SchedulerConfig};
use workmate_identity::{Clock, GroupRoles, Oidc, OidcSettings, SessionKey};
use workmate_protocol::TenantId;
use workmate_providers::ProviderRouter;
use workmate_store::{NewUser, Role};

use crate::config::Config;
use crate::config::HttpLimits;
use crate::engine::{self, Script};
use crate::error::StartupError;
use crate::http::api::{Auth, Sso, auth};
use crate::http::{AppState, BoundedListener, ConnectPages, router_with};
use crate::metrics::Metrics;
use crate::platforms::Platforms;
use crate::sandbox::DemoSandbox;
use crate::{data_dir, database, recovery, shutdown};

/// Runs the server until SIGTERM or Ctrl-C.
pub async fn serve(config: &Config, script: Script) -> Result<(), StartupError> {
    let providers = engine::providers(config, script)?;
    let listener = bind(config.server.listen).await?;
    data_dir::prepare(&config.server.data_dir)?;
    data_dir::prepare_workspaces(&config.tools.workspaces_dir)?;
    log_shell_sandbox(config).await;
    // Listening for signals from here on means a stop request during a long migration is honoured
    // once it finishes, with exit code 0, instead of killing the process mid-way.
    let stop = shutdown::Stop::new();
    let token = stop.token.clone();
    let signals = shutdown::spawn_signal_listener(stop.clone());
    let outcome = open_and_run(listener, config, providers, script, &stop).await;
    token.cancel();
    // It may be waiting for a second signal that will not come.
    signals.abort();
    if let Err(e) = signals.await
        && !e.is_cancelled()
    {
        warn!(error = %e, "The signal listener ended abnormally.");
    }
    outcome
}

/// Probes the shell sandbox once and says which is in effect. A sandbox that cannot start does not
/// stop the server: `run_shell` refuses every call with the same reason until it is fixed.
async fn log_shell_sandbox(config: &Config) {
    let mode = config.tools.shell_sandbox.as_str();
    match config.tools.shell_sandbox.sandbox().probe().await {
        Ok(described) if mode == "none" => {
            warn!(shell_sandbox = mode, "Shell sandbox: {described}.");
        }
        Ok(described) => info!(shell_sandbox = mode, "Shell sandbox: {described}."),
        Err(why) => error!(shell_sandbox = mode, "Shell sandbox unavailable: {why}."),
    }
}

async fn open_and_run(
    listener: TcpListener,
    config: &Config,
    providers: ProviderRouter,
    script: Script,
    stop: &shutdown::Stop,
) -> Result<(), StartupError> {
    let token = stop.token.clone();
    let store = database::open(config).await?;
    let report = database::migrate(&store, config).await?;
    let named_in_vault = crate::secret_refs::any(config);
    let resolved = match crate::secret_refs::resolve(config, &store).await {
        Ok(resolved) => resolved,
        Err(e) => {
            store.close().await;
            return Err(e);
        }
    };
    let config = &resolved;
    // Model provider keys named in the vault are known only now.
    let providers = if named_in_vault {
        engine::providers(config, script)?
    } else {
        providers
    };
    info!(
        database = %config.database.url.redacted(),
        applied = report.applied.len(),
        already_applied = report.already_applied,
        "Database ready."
    );
    let outcome = async {
        prepare_default_tenant(&store)
            .await
            .map_err(|source| StartupError::Migrate {
                url: config.database.url.redacted(),
                source,
            })?;
        let admin = admin_auth(config)?;
        let coordinator = engine::coordinator(config).await?;
        let hub = engine::build_hub(config, store.clone(), providers, script, coordinator);
        let metrics = Arc::new(Metrics::new());
        hub.observe(metrics.engine());
        let mcp = engine::mcp_servers(config, &store).map_err(StartupError::Usage)?;
        hub.add_tool_source(Arc::new(workmate_mcp::McpSource(Arc::clone(&mcp))));
        let connectors = crate::connectors::connectors(config, &store);
        if let Some(connectors) = &connectors {
            hub.add_tool_source(Arc::clone(connectors) as Arc<dyn workmate_tools::ToolSource>);
        }
        // `workmate demo` talks to its own Slack, Feishu, WeCom and DingTalk stand-ins, whatever
        // is configured.
        let sandbox = match script {
            Script::Demo => Some(DemoSandbox::new(
                listener.local_addr().map_err(StartupError::Serve)?,
            )?),
            Script::Configured => None,
        };
        let chat_config = ChatConfig {
            connection_lease: config.coordinator.connection_lease,
            deliveries_per_minute: config.coordinator.deliveries_per_minute,
            ..ChatConfig::default()
        };
        let chat = Chat::new(hub.clone(), store.clone(), chat_config);
        chat.observe(Arc::clone(&metrics) as Arc<dyn workmate_chat::IntakeObserver>);
        chat.attach_mcp(Arc::clone(&mcp));
        let connect_pages = match connectors {
            Some(connectors) => {
                let listening = listener.local_addr().map_err(StartupError::Serve)?;
                let pages = crate::connectors::connect_pages(
                    config,
                    &store,
                    Arc::clone(&connectors),
                    mcp,
                    admin.sso(),
                    listening,
                )?;
                chat.attach_connectors(
                    connectors,
                    Arc::clone(&pages) as Arc<dyn workmate_chat::ConnectLinks>,
                );
                Some(pages)
            }
            None => None,
        };
        if let Some(sso) = admin.sso() {
            chat.set_account_links(Arc::new(sso.links()));
        }
        let platforms = Platforms::mount(config, sandbox.as_ref(), &chat)?;
        let scheduler = Scheduler::new(
            hub.clone(),
            Arc::new(chat.clone()),
            SchedulerConfig {
                tick: config.scheduler.tick,
                ..SchedulerConfig::default()
            },
        );
        // `/workmate automations run` starts runs through it.
        chat.attach_scheduler(scheduler.clone());
        chat.start();
        // The cards a kill left behind first, then the turns a crash cut short, once their
        // cards can show them; then sessions whose calls were left open by a version that did
        // not record open turns.
        let redrawn = chat.redraw_after_restart().await;
        if redrawn > 0 {
            info!(
                sessions = redrawn,
                "Redrew the cards of sessions a restart left."
            );
        }
        let recovered = recovery::recover_open_turns(&hub, &chat, &metrics, true).await;
        if recovered > 0 {
            info!(turns = recovered, "Took up turns a restart cut short.");
        }
        let resumed = hub
            .resume_pending()
            .await
            .map_err(|e| StartupError::Resume(e.to_string()))?;
        if resumed > 0 {
            info!(
                sessions = resumed,
                "Resumed sessions with unanswered tool calls."
            );
        }
        recovery::run_stored_commands(hub.clone(), token.clone()).await;
        recovery::sweep(hub.clone(), chat.clone(), metrics.clone(), token.clone());
        metrics.watch_coordinator(hub.coordinator());
        hub.evict_idle_continuously(token.clone());
        crate::audit::seal_continuously(store.clone(), token.clone());
        crate::audit::ship_to_sinks(config, &store, &token)?;
        scheduler.observe_ticks(metrics.clone());
        scheduler.start();
        let state = AppState {
            store: store.clone(),
            metrics,
            hub: hub.clone(),
            auth: Arc::new(admin),
            scheduler: scheduler.clone(),
            chat: chat.clone(),
            platforms: platforms.clone(),
            shutdown: token.clone(),
            personas: Arc::new(workmate_personas::InstallPolicy {
                network: Arc::clone(&config.network.policy),
                folder_roots: config.personas.folder_roots.clone(),
                sandbox: Some(Arc::new(config.tools.shell_sandbox.sandbox())),
            }),
            streams: Arc::new(crate::http::StreamCaps::new(
                config.server.limits.max_streams_per_client,
            )),
        };
        let served = if token.is_cancelled() {
            Ok(())
        } else {
            let sandbox = sandbox.map(|sandbox| {
                sandbox.show_banner();
                sandbox.router
            });
            let connect = connect_pages.map(ConnectPages::routes);
            let extra = match (sandbox, connect) {
                (Some(sandbox), Some(connect)) => Some(sandbox.merge(connect)),
                (sandbox, connect) => sandbox.or(connect),
            };
            run_with(
                listener,
                state,
                extra,
                config.server.limits,
                config.server.shutdown_grace,
            )
            .await
        };
        // The drain, within the grace period counted from the stop signal: runs stay claimed
        // (another process, or the next start, adopts them); long connections close and release
        // their leases; deliveries already running, which still submit to the hub, end before
        // it does, and those not started stay in the intake table for another replica; then
        // running turns finish or are left, and every session lease is released.
        let deadline = stop.deadline(config.server.shutdown_grace);
        scheduler.shutdown().await;
        platforms.shutdown().await;
        chat.shutdown(deadline.saturating_duration_since(tokio::time::Instant::now()))
            .await;
        let drained = hub.drain(deadline, &stop.now).await;
        // The releases just signalled reach the other replicas before this one is gone.
        hub.coordinator().flush(Duration::from_secs(1)).await;
        info!(
            finished = drained.finished,
            left = drained.left,
            leases_released = drained.released,
            "Drained."
        );
        served
    }
    .await;
    store.close().await;
    info!("Stopped.");
    outcome
}

/// The tenant the admin token acts in, and its admin user (who may answer every prompt).
async fn prepare_default_tenant(
    store: &workmate_store::Store,
) -> Result<(), workmate_store::Error> {
    let tenant = TenantId::from(auth::DEFAULT_TENANT);
    store.tenants().ensure(&tenant, "Default").await?;
    let admin = NewUser {
        id: auth::ADMIN_USER.into(),
        display_name: "Admin".into(),
        email: None,
        role: Role::Admin,
        sso_subject: None,
    };
    store.tenants().upsert_user(&tenant, &admin).await?;
    Ok(())
}

/// The API's tokens: the admin token (configured, kept from an earlier start, or generated now)
/// and the surfaces' tokens.
fn admin_auth(config: &Config) -> Result<Auth, StartupError> {
    let (token, generated) =
        auth::load_or_generate(config.server.admin_token.as_ref(), &config.server.data_dir)
            .map_err(StartupError::Token)?;
    if generated {
        let path = config.server.data_dir.join(auth::TOKEN_FILE);
        warn!(path = %path.display(), "Generated an admin token for the HTTP API.");
        show_where_the_token_is(&path);
    }
    let mut auth = Auth::admin(token).with_surfaces(
        config
            .server
            .surface_tokens
            .iter()
            .map(|s| (s.name.clone(), s.token.clone(), s.grants)),
    );
    if let Some(oidc) = &config.auth.oidc {
        auth = auth.with_sso(
            single_sign_on(config, oidc)?,
            config.auth.break_glass_admin_token,
        );
        if config.auth.break_glass_admin_token {
            warn!(
                "The static admin token is on beside single sign-on ([auth] break_glass_admin_token)."
            );
        } else {
            // The token is still kept, so the break-glass switch, once turned on, opens with the
            // token the operator already holds; until then it opens nothing.
            info!(
                "The static admin token is off; [auth] break_glass_admin_token = true turns it on."
            );
        }
    }
    if let Some(surface) = auth.surface_sharing_admin_token() {
        return Err(StartupError::Usage(format!(
            "[server.surface_tokens] {surface} is the admin token; give the surface its own token"
        )));
    }
    Ok(auth)
}

/// Single sign-on through `[auth.oidc]`, its cookies signed with the key in the data directory.
fn single_sign_on(config: &Config, oidc: &crate::config::OidcConfig) -> Result<Sso, StartupError> {
    let settings = OidcSettings {
        issuer: oidc.issuer.clone(),
        client_id: oidc.client_id.clone(),
        client_secret: oidc.client_secret.clone(),
        redirect_url: oidc.redirect_url.clone(),
        groups_claim: oidc.groups_claim.clone(),
        tenant_claim: oidc.tenant_claim.clone(),
        scopes: oidc.scopes.clone(),
    };
    let http = auth_egress(config, &[&oidc.issuer]).map_err(StartupError::Usage)?;
    let client = Oidc::new(settings, http, Clock::system())
        .map_err(|e| StartupError::Usage(format!("[auth.oidc]: {e}")))?;
    let (key, generated) = SessionKey::load_or_generate(&config.server.data_dir).map_err(|e| {
        StartupError::Usage(format!(
            "the session key in {}: {e}",
            config.server.data_dir.display()
        ))
    })?;
    if generated {
        info!("Generated the session cookie key in the data directory.");
    }
    let roles = GroupRoles::new(
        config.auth.admin_groups.iter().cloned(),
        config.auth.approver_groups.iter().cloned(),
    );
    info!(issuer = %oidc.issuer, "Single sign-on is on.");
    Ok(Sso::new(client, key, roles))
}

/// The guarded egress of sign-in and token requests (OpenID discovery, key sets, token
/// endpoints): the operator's `[network]` policy, plus the hosts of endpoints the operator
/// configured (`endpoints`: an issuer, a token URL), and no redirects, so a redirect cannot send
/// a client secret or a code elsewhere.
pub fn auth_egress(config: &Config, endpoints: &[&str]) -> Result<workmate_net::Egress, String> {
    let mut entries = config.network.policy.entries().to_vec();
    entries.extend(
        endpoints
            .iter()
            .filter_map(|e| url::Url::parse(e).ok())
            .filter_map(|u| u.host_str().map(str::to_owned)),
    );
    let policy = workmate_net::NetworkPolicy::allow_private(&entries).map_err(|e| e.to_string())?;
    workmate_net::Egress::new(
        std::sync::Arc::new(policy),
        workmate_net::EgressOptions::credentialed().without_redirects(),
    )
}

/// Tells the operator where a generated token is; the token itself is never printed or logged
/// (terminal scrollback and captured stderr outlive it).
#[allow(
    clippy::print_stderr,
    reason = "the operator must learn once where a generated token is kept"
)]
fn show_where_the_token_is(path: &std::path::Path) {
    eprintln!(
        "\nworkmate generated an admin token for the HTTP API and keeps it in {} (readable by \
         its owner only).\nSend it as `Authorization: Bearer $(cat {})`.\n",
        path.display(),
        path.display()
    );
}

/// Serves on `listener`, bounded by `limits`, until `state.shutdown` is cancelled, then waits up
/// to `grace` for in-flight requests. Stops neither the hub nor the store.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    limits: HttpLimits,
    grace: Duration,
) -> Result<(), StartupError> {
    run_with(listener, state, None, limits, grace).await
}

/// [`run`] with `extra` routes (the demo's sandbox) beside the application's.
async fn run_with(
    listener: TcpListener,
    state: AppState,
    extra: Option<axum::Router>,
    limits: HttpLimits,
    grace: Duration,
) -> Result<(), StartupError> {
    let address = listener.local_addr().map_err(StartupError::Serve)?;
    let shutdown = state.shutdown.clone();
    let app = router_with(state, extra, limits);
    // Handlers see the client's address (`ConnectInfo`): event streams are capped per address.
    let app = app.into_make_service_with_connect_info::<crate::http::ClientAddr>();
    let server = axum::serve(BoundedListener::new(listener, limits), app)
        .with_graceful_shutdown(shutdown.clone().cancelled_owned())
        .into_future();
    let mut server = std::pin::pin!(server);
    info!(%address, "Listening.");
    tokio::select! {
        result = &mut server => result.map_err(StartupError::Serve),
        () = shutdown.cancelled() => match tokio::time::timeout(grace, &mut server).await {
            Ok(result) => result.map_err(StartupError::Serve),
            Err(_) => {
                let grace_ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX);
                warn!(grace_ms, "Requests still running after the grace period were dropped.");
                Ok(())
            }
        },
    }
}

/// Binds the listen address; every failure here is a configuration problem.
async fn bind(addr: SocketAddr) -> Result<TcpListener, StartupError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| StartupError::Listen {
            addr,
            reason: match e.kind() {
                io::ErrorKind::AddrInUse => "address already in use".to_owned(),
                io::ErrorKind::AddrNotAvailable => {
                    "no network interface has this address".to_owned()
                }
                io::ErrorKind::PermissionDenied => {
                    "permission denied (ports below 1024 need privileges)".to_owned()
                }
                _ => e.to_string(),
            },
        })
}
