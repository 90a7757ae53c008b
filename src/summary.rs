//! What the binary reports at start-up: the entities it serves and where; and the connection
//! string, which `serve` prints once the listener is bound (the real port is known only then).

use std::fmt::Write as _;
use std::net::SocketAddr;

use busbar_broker::auth::{DEFAULT_KEY, DEFAULT_KEY_NAME};
use busbar_broker::config::{Config, RuleFilter};

use crate::cli::{ServeOptions, StorageChoice};
use crate::memory_budget;

/// The port SDKs use when the connection string's endpoint names none.
const AMQP_PORT: u16 = 5672;

/// The emulator-style connection string for a broker listening on `listen`: `localhost`
/// for loopback and wildcard addresses, and `:port` only when it is not 5672 (which the
/// SDKs assume, and which azservicebus cannot change).
pub(crate) fn connection_string(listen: SocketAddr) -> String {
    let ip = listen.ip();
    let host = if ip.is_loopback() || ip.is_unspecified() {
        "localhost".to_owned()
    } else {
        listen.ip().to_string()
    };
    let host = if listen.is_ipv6() && host != "localhost" {
        format!("[{host}]")
    } else {
        host
    };
    let port = if listen.port() == AMQP_PORT {
        String::new()
    } else {
        format!(":{}", listen.port())
    };
    format!(
        "Endpoint=sb://{host}{port};SharedAccessKeyName={DEFAULT_KEY_NAME};SharedAccessKey={DEFAULT_KEY};UseDevelopmentEmulator=true;"
    )
}

/// A human-readable account of what would be served.
pub(crate) fn describe(config: &Config, options: &ServeOptions) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(text, "namespace: {}", config.namespace.name);
    let source = options
        .config
        .as_ref()
        .map_or("built-in emulator default".to_owned(), |path| {
            path.display().to_string()
        });
    let _ = writeln!(text, "configuration: {source}");
    for queue in &config.namespace.queues {
        let delivery = &queue.delivery;
        let _ = writeln!(
            text,
            "  queue {} (lock {:?}, max deliveries {}, sessions {}, ttl {:?})",
            queue.name,
            delivery.lock_duration,
            delivery.max_delivery_count,
            on_off(delivery.requires_session),
            delivery.default_message_time_to_live
        );
    }
    for topic in &config.namespace.topics {
        let count = topic.subscriptions.len();
        let plural = if count == 1 { "" } else { "s" };
        let _ = writeln!(
            text,
            "  topic {} ({count} subscription{plural})",
            topic.name
        );
        for subscription in &topic.subscriptions {
            let rules: Vec<String> = subscription
                .rules
                .iter()
                .map(|rule| {
                    let kind = match rule.filter {
                        RuleFilter::Correlation(_) => "correlation",
                        RuleFilter::Sql(_) => "sql",
                    };
                    format!("{} [{kind}]", rule.name)
                })
                .collect();
            let _ = writeln!(
                text,
                "    subscription {} (rules: {})",
                subscription.name,
                rules.join(", ")
            );
        }
    }
    let storage = match &options.storage {
        StorageChoice::Directory(dir) => format!("directory {}", dir.display()),
        StorageChoice::Memory => "memory (nothing survives a restart)".to_owned(),
        StorageChoice::Postgres(url) => match busbar_store_postgres::DatabaseUrl::parse(url) {
            Ok(url) => format!("PostgreSQL {url} (one broker serves, others stand by)"),
            Err(_) => "PostgreSQL".to_owned(),
        },
    };
    let _ = writeln!(text, "storage: {storage}");
    if let Some(bytes) = config.memory_budget_bytes {
        let _ = writeln!(text, "memory budget: {}", memory_budget::describe(bytes));
    }
    let _ = writeln!(text, "listen: amqp://{}", options.listen);
    text
}

fn on_off(flag: bool) -> &'static str {
    if flag { "on" } else { "off" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn connection_string_names_the_port_only_when_not_5672() {
        let table = [
            (
                "127.0.0.1:5672",
                "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
            ),
            (
                "0.0.0.0:5673",
                "Endpoint=sb://localhost:5673;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
            ),
            (
                "[::1]:5672",
                "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
            ),
            (
                "192.0.2.7:6000",
                "Endpoint=sb://192.0.2.7:6000;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
            ),
            (
                "[2001:db8::1]:5672",
                "Endpoint=sb://[2001:db8::1];SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
            ),
        ];
        for (listen, expected) in table {
            assert_eq!(
                connection_string(listen.parse().unwrap()),
                expected,
                "{listen}"
            );
        }
    }

    #[test]
    fn the_summary_leaves_the_connection_string_to_the_bound_listener() {
        let options = ServeOptions {
            config: Some(PathBuf::from("Config.json")),
            storage: StorageChoice::Memory,
            listen: "127.0.0.1:0".parse().unwrap(),
            admin_listen: None,
            tls_listen: None,
            tls: None,
            test_controls: false,
            memory_budget: None,
            policies: None,
        };
        let text = describe(&Config::emulator_default(), &options);
        assert!(text.contains("configuration: Config.json\n"));
        assert!(text.contains("storage: memory (nothing survives a restart)\n"));
        assert!(text.ends_with("listen: amqp://127.0.0.1:0\n"), "{text}");
        assert!(!text.contains("Endpoint="));
    }

    #[test]
    fn describes_the_default_configuration() {
        let options = ServeOptions {
            config: None,
            storage: StorageChoice::Directory(PathBuf::from("./busbar-data")),
            listen: "127.0.0.1:5672".parse().unwrap(),
            admin_listen: None,
            tls_listen: None,
            tls: None,
            test_controls: false,
            memory_budget: None,
            policies: None,
        };
        let text = describe(&Config::emulator_default(), &options);
        let expected = "\
namespace: sbemulatorns
configuration: built-in emulator default
  queue queue.1 (lock 60s, max deliveries 3, sessions off, ttl 3600s)
  topic topic.1 (1 subscription)
    subscription subscription.1 (rules: app-prop-filter-1 [correlation])
storage: directory ./busbar-data
listen: amqp://127.0.0.1:5672
";
        assert_eq!(text, expected);
    }
}
