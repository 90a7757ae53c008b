//! Running the broker: the tokio runtime, the storage chosen on the command line (for
//! PostgreSQL after taking the lease, see `active_node`), the listeners
//! (AMQP, AMQPS and admin, each serving every protocol through the gateway) and the TLS
//! certificate, the stable start-up lines, and SIGINT/SIGTERM handling.

use std::future::Future;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use busbar_admin::http::{AdminServer, ServerConfig, Upgrades};
use busbar_gateway::tls::{DevelopmentCa, Identity, TlsConfig, TlsError};
use busbar_gateway::{Gateway, Limits, Stopping};

use busbar_broker::EntityName;
use busbar_broker::config::Config;
use busbar_broker::runtime::{self, Clock, RuntimeError};
use busbar_store::{FileOptions, FileStorage, MemoryStorage, Storage, StoreError};
use busbar_store_postgres::DatabaseUrl;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::active_node::{ActiveNode, Backoff, take_over};
use crate::admin::{self, BrokerNamespace};
use crate::cli::{DEFAULT_DATA_DIR, ServeOptions, StorageChoice};
use crate::gateway::{self, BrokerDispatch, WebSocketAmqp};
use crate::policies;
use crate::summary::connection_string;

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    /// The tokio runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The listen address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The TLS certificate could not be read, created or used.
    #[error("cannot set up TLS: {0}")]
    Tls(#[from] TlsError),
    /// The storage could not be opened.
    #[error("cannot open the storage: {0}")]
    Storage(#[from] StoreError),
    /// The storage failed (or the lease was lost) while serving; the broker stopped serving
    /// (for PostgreSQL it then takes the lease again and recovers from the database).
    #[error("the storage failed, stopped serving: {0}")]
    StorageFailed(StoreError),
    /// The broker failed.
    #[error("{0}")]
    Broker(#[from] RuntimeError),
}

/// Serves until SIGINT or SIGTERM, then shuts down cleanly.
pub(crate) fn serve(config: &Config, options: &ServeOptions) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let never = std::future::pending::<StoreError>();
    match &options.storage {
        StorageChoice::Memory => {
            runtime.block_on(run(config, options, MemoryStorage::volatile(), never))
        }
        StorageChoice::Directory(dir) => {
            // Sealed segments get summaries holding each message's index form, which is all
            // a restart reads of them (the runtime recovers keeping that form).
            let index_part = busbar_core::index_part;
            let storage = FileStorage::open_with_index(dir, FileOptions::default(), index_part)?;
            runtime.block_on(run(config, options, storage, never))
        }
        StorageChoice::Postgres(url) => serve_postgres(&runtime, config, options, url),
    }
}

/// Serves as the active node of the database at `url` for as long as it may. When the storage
/// fails or the lease is lost, it stops serving, gives the lease up and takes it again as a
/// standby would, reconnecting with backoff while the database cannot be reached (only a
/// database unreachable at start-up is an error). SIGINT or SIGTERM ends it at any point.
fn serve_postgres(
    runtime: &Runtime,
    config: &Config,
    options: &ServeOptions,
    url: &str,
) -> Result<(), ServeError> {
    let url = DatabaseUrl::parse(url).map_err(|error| StoreError::Database {
        operation: "parse the URL",
        reason: error.to_string(),
    })?;
    let mut backoff = Backoff::new();
    let mut served = false;
    loop {
        let taking = {
            let url = url.clone();
            runtime.spawn_blocking(move || take_over(&url))
        };
        let taken = runtime.block_on(async {
            tokio::select! {
                taken = taking => Some(taken),
                () = stop_signal() => None,
            }
        });
        let ActiveNode {
            storage,
            mut failed,
            lease,
        } = match taken {
            None => return Ok(()),
            Some(Ok(Ok(active))) => active,
            Some(Ok(Err(ServeError::Storage(error)))) if served => {
                tracing::warn!(%error, "cannot reach the database; trying again");
                if !wait_unless_stopped(runtime, backoff.next_wait()) {
                    return Ok(());
                }
                continue;
            }
            Some(Ok(Err(error))) => return Err(error),
            Some(Err(panicked)) => {
                return Err(ServeError::Runtime(std::io::Error::other(panicked)));
            }
        };
        served = true;
        backoff.reset();
        let failed = async move { failed.recv().await.unwrap_or(StoreError::Closed) };
        let outcome = runtime.block_on(run(config, options, storage, failed));
        drop(lease);
        match outcome {
            Err(ServeError::StorageFailed(error)) => {
                tracing::warn!(%error, "stopped serving; taking the lease again");
                if !wait_unless_stopped(runtime, backoff.next_wait()) {
                    return Ok(());
                }
            }
            other => return other,
        }
    }
}

/// Waits `wait`, unless SIGINT or SIGTERM comes first: then `false`.
fn wait_unless_stopped(runtime: &Runtime, wait: std::time::Duration) -> bool {
    runtime.block_on(async {
        tokio::select! {
            () = tokio::time::sleep(wait) => true,
            () = stop_signal() => false,
        }
    })
}

/// Serves `storage` until SIGINT or SIGTERM, or until `failed` resolves (the storage can no
/// longer acknowledge anything): then the same clean shutdown, reported as an error.
async fn run<S: Storage + 'static>(
    config: &Config,
    options: &ServeOptions,
    storage: S,
    failed: impl Future<Output = StoreError> + Send + 'static,
) -> Result<(), ServeError> {
    let listeners = bind_listeners(options).await?;
    let tls = tls_config(options)?;
    tracing::info!("serving");
    let (stop_gateway, gateway_stopping) = watch::channel(false);
    let (amqp_sender, amqp_connections) = gateway::amqp_channel();
    let mut listener_tasks = JoinSet::new();
    let namespace = config.namespace.name.clone();
    let started = unix_millis_now();
    let ready = |control: runtime::Control| {
        let entity_keys = {
            let control = control.clone();
            move |name: &EntityName| control.entity_keys(name)
        };
        let namespace = Arc::new(BrokerNamespace::new(control, namespace, started));
        let mut server_config = ServerConfig::new(admin::authorization(
            config.keys.clone(),
            config.namespace.name.clone(),
            entity_keys,
        ));
        server_config.upgrade = Upgrades::to(WebSocketAmqp::new(amqp_sender.clone()));
        let admin_server = AdminServer::new(namespace, server_config);
        let dispatch = BrokerDispatch::new(amqp_sender, admin_server);
        let gateway = Gateway::new(dispatch, Some(tls), Limits::default());
        for listener in listeners {
            let stopping = Stopping::new(gateway_stopping.clone());
            listener_tasks.spawn(busbar_gateway::serve(
                listener,
                Arc::clone(&gateway),
                stopping,
            ));
        }
    };
    let failure = Arc::new(std::sync::Mutex::new(None));
    let stop = {
        let failure = Arc::clone(&failure);
        async move {
            tokio::select! {
                () = stop_signal() => {}
                error = failed => {
                    tracing::error!(%error, "the storage failed; stopping");
                    *failure.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(error);
                }
            }
            let _ = stop_gateway.send(true);
        }
    };
    let clock = if options.test_controls {
        // Never on by accident: said on standard output, in the log and in /health.
        println!("test controls: on (virtual clock and fault injection; not for production)");
        tracing::warn!("test controls are on: virtual clock and fault injection");
        Clock::anchored_now().virtual_time()
    } else {
        Clock::anchored_now()
    };
    let _ = std::io::stdout().flush();
    #[cfg(unix)]
    let reload = options.policies.clone().map(|path| {
        let addresses = policies::listen_addresses(options);
        tokio::spawn(policies::reload_on_hangup(
            path,
            config.keys.clone(),
            addresses,
        ))
    });
    let ran = runtime::run(config, storage, amqp_connections, stop, clock, ready).await;
    #[cfg(unix)]
    if let Some(reload) = reload {
        reload.abort();
    }
    ran?;
    while listener_tasks.join_next().await.is_some() {}
    tracing::info!("stopped");
    let failure = failure
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take();
    match failure {
        Some(error) => Err(ServeError::StorageFailed(error)),
        None => Ok(()),
    }
}

/// Binds the AMQP listener and, unless turned off, the AMQPS and admin ones, and prints the
/// stable start-up lines. Each serves every protocol; they differ in the port a client's
/// connection string leads it to.
async fn bind_listeners(options: &ServeOptions) -> Result<Vec<TcpListener>, ServeError> {
    let amqp = bind(options.listen).await?;
    // Tests and scripts read the ports from these lines: keep their shape stable.
    let bound = local_addr(&amqp, options.listen)?;
    println!("listening on {bound}");
    println!("connection string: {}", connection_string(bound));
    let mut listeners = vec![amqp];
    for (label, address) in [
        ("amqps", options.tls_listen),
        ("admin", options.admin_listen),
    ] {
        if let Some(address) = address {
            let listener = bind(address).await?;
            println!("{label} listening on {}", local_addr(&listener, address)?);
            listeners.push(listener);
        }
    }
    let _ = std::io::stdout().flush();
    Ok(listeners)
}

async fn bind(address: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Bind { address, source })
}

fn local_addr(listener: &TcpListener, address: SocketAddr) -> Result<SocketAddr, ServeError> {
    listener
        .local_addr()
        .map_err(|source| ServeError::Bind { address, source })
}

/// Reads the certificate of `--tls-cert`/`--tls-key`, or the development CA's (created on
/// first use), and prints the CA's path in a stable line.
fn tls_config(options: &ServeOptions) -> Result<TlsConfig, ServeError> {
    let identity = match &options.tls {
        Some(files) => Identity::from_pem_files(&files.cert, &files.key)?,
        None => {
            let development = DevelopmentCa::load_or_create(&development_dir(options))?;
            if development.created {
                tracing::info!(
                    ca = %development.ca_cert.display(),
                    "created a development CA for TLS; trust it in clients"
                );
            }
            // Tests and scripts read the CA's path from this line: keep its shape.
            println!("tls ca: {}", development.ca_cert.display());
            let _ = std::io::stdout().flush();
            development.identity
        }
    };
    Ok(TlsConfig::new(identity)?)
}

/// Where the development CA lives: `<data-dir>/tls`, or with `--memory` or `--storage` the
/// default data directory's, so that a CA trusted once serves runs with any storage alike.
fn development_dir(options: &ServeOptions) -> PathBuf {
    match &options.storage {
        StorageChoice::Directory(dir) => dir.join("tls"),
        StorageChoice::Memory | StorageChoice::Postgres(_) => {
            PathBuf::from(DEFAULT_DATA_DIR).join("tls")
        }
    }
}

fn unix_millis_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

/// Resolves on SIGINT or SIGTERM (Ctrl-C only where there are no Unix signals).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut interrupt), Ok(mut terminate)) => {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
