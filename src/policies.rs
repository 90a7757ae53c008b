//! `--policies FILE`: the namespace's shared-access authorization rules, and `busbar keys
//! generate`.
//!
//! A file of its own rather than part of `Config.json`: that file is the emulator's format,
//! shared and often committed with an application's tests, while keys are secrets to keep apart
//! (with the file's permissions, or in the environment: a key written `"env:NAME"` is read from
//! the environment variable `NAME`).
//!
//! On SIGHUP the file is read again and its rules replace the running broker's (`reload_on_hangup`):
//! keys are rotated, rights changed and rules removed without a restart. A file that no longer
//! reads, or that would expose the published key, leaves the rules as they were.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use busbar_broker::auth::{AccessRights, AuthorizationRule, Claim, KeyRing, SasKeys};
use serde_json::Value;

/// Service Bus allows at most 12 shared-access rules on a namespace.
const MAX_RULES: usize = 12;
/// Keys are 256-bit.
const KEY_BYTES: usize = 32;

/// Reads the rules of a policies file:
/// `{"SharedAccessPolicies": [{"KeyName", "PrimaryKey", "SecondaryKey"?, "Rights": [...]}]}`.
pub(crate) fn load(path: &Path) -> Result<SasKeys, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let document: Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    let rules = document
        .get("SharedAccessPolicies")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{shown}: SharedAccessPolicies must be an array of rules"))?;
    if rules.is_empty() || rules.len() > MAX_RULES {
        return Err(format!(
            "{shown}: SharedAccessPolicies must hold 1 to {MAX_RULES} rules, not {}",
            rules.len()
        ));
    }
    let rules = rules
        .iter()
        .enumerate()
        .map(|(index, rule)| parse_rule(rule).map_err(|e| format!("{shown}: rule {index}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SasKeys::from_rules(rules))
}

fn parse_rule(rule: &Value) -> Result<AuthorizationRule, String> {
    let text = |name: &str| rule.get(name).and_then(Value::as_str);
    let key_name = text("KeyName")
        .filter(|name| !name.is_empty() && name.len() <= 256)
        .ok_or("KeyName must be a name of 1 to 256 characters")?;
    let primary_key = key(text("PrimaryKey").ok_or("PrimaryKey is missing")?)?;
    let secondary_key = text("SecondaryKey").map(key).transpose()?;
    let rights = rule
        .get("Rights")
        .and_then(Value::as_array)
        .filter(|rights| !rights.is_empty())
        .ok_or("Rights must list Manage, Send or Listen")?
        .iter()
        .map(|right| {
            right
                .as_str()
                .and_then(Claim::parse)
                .ok_or_else(|| format!("unknown right {right}: use Manage, Send or Listen"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(AuthorizationRule {
        key_name: key_name.to_owned(),
        primary_key,
        secondary_key,
        rights: AccessRights::of(rights),
    })
}

/// A key as written, or read from the environment (`env:NAME`); it must be 256 bits in base64.
fn key(written: &str) -> Result<String, String> {
    let value = match written.strip_prefix("env:") {
        Some(variable) => std::env::var(variable)
            .map_err(|_| format!("the environment variable {variable} holds no key"))?,
        None => written.to_owned(),
    };
    match STANDARD.decode(value.trim()) {
        Ok(bytes) if bytes.len() == KEY_BYTES => Ok(value.trim().to_owned()),
        _ => Err(format!(
            "a key must be {KEY_BYTES} random bytes in base64 (44 characters); \
             `busbar keys generate` makes one"
        )),
    }
}

/// A fresh 256-bit key in base64, from the operating system's randomness.
pub(crate) fn generate_key() -> Result<String, String> {
    let mut bytes = [0u8; KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness from the system: {e}"))?;
    Ok(STANDARD.encode(bytes))
}

/// `busbar keys generate [--name NAME]`: a key, a policies file using it, and the connection
/// strings that use it.
pub(crate) fn generate(name: &str) -> Result<String, String> {
    let primary = generate_key()?;
    let secondary = generate_key()?;
    let file = serde_json::json!({
        "SharedAccessPolicies": [{
            "KeyName": name,
            "PrimaryKey": primary,
            "SecondaryKey": secondary,
            "Rights": ["Manage", "Send", "Listen"],
        }]
    });
    let file = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    Ok(format!(
        "{primary}\n\n\
         # A policies file for `busbar --policies FILE` (keep it private):\n{file}\n\n\
         # Connection strings:\n\
         Endpoint=sb://HOST/;SharedAccessKeyName={name};SharedAccessKey={primary}\n\
         Endpoint=sb://HOST/;SharedAccessKeyName={name};SharedAccessKey={secondary}\n"
    ))
}

/// Every address the broker listens on.
pub(crate) fn listen_addresses(options: &ServeOptions) -> Vec<SocketAddr> {
    [
        Some(options.listen),
        options.tls_listen,
        options.admin_listen,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Re-reads `path` into `keys` on every SIGHUP, for as long as the broker runs; each re-read
/// is announced on standard output (`policies re-read from PATH`) or its failure logged.
/// Tokens presented afterwards are judged by the new rules at once.
#[cfg(unix)]
pub(crate) async fn reload_on_hangup(path: PathBuf, keys: KeyRing, listeners: Vec<SocketAddr>) {
    use std::io::Write as _;
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else {
        tracing::warn!("SIGHUP cannot be caught: the policies file is read at start-up only");
        return;
    };
    while hangups.recv().await.is_some() {
        let read = load(&path).and_then(|read| {
            check_exposure(&read, listeners.iter().copied())?;
            Ok(read)
        });
        match read {
            Ok(read) => {
                keys.replace(read);
                tracing::info!(path = %path.display(), "policies re-read");
                println!("policies re-read from {}", path.display());
                let _ = std::io::stdout().flush();
            }
            Err(error) => {
                tracing::error!(%error, "policies not re-read; the rules in force are kept");
            }
        }
    }
}

/// Refuses to serve the emulator's published key on anything but loopback: anyone who has read
/// the emulator's documentation knows it (as Redis's protected mode refuses to serve without a
/// password off loopback).
pub(crate) fn check_exposure(
    keys: &SasKeys,
    listeners: impl IntoIterator<Item = std::net::SocketAddr>,
) -> Result<(), String> {
    if !keys.accepts_published_key() {
        return Ok(());
    }
    match listeners.into_iter().find(|addr| !addr.ip().is_loopback()) {
        Some(exposed) => Err(format!(
            "refusing to listen on {exposed} with the emulator's published key SAS_KEY_VALUE, \
             which anyone may know: give keys of your own with --policies FILE \
             (`busbar keys generate` makes one), or listen on loopback only"
        )),
        None => Ok(()),
    }
}

use crate::cli::ServeOptions;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_is_accepted_and_a_short_one_refused() {
        let generated = generate_key().unwrap();
        assert_eq!(key(&generated).unwrap(), generated);
        assert_ne!(generate_key().unwrap(), generated);
        assert!(key("SAS_KEY_VALUE").is_err());
        assert!(key("c2hvcnQ=").is_err());
    }

    #[test]
    fn rules_are_read_with_their_rights_and_bad_ones_refused() {
        let primary = generate_key().unwrap();
        let rule =
            serde_json::json!({"KeyName": "sender", "PrimaryKey": primary, "Rights": ["send"]});
        let parsed = parse_rule(&rule).unwrap();
        assert_eq!(parsed.rights, AccessRights::of([Claim::Send]));
        assert_eq!(parsed.secondary_key, None);
        for bad in [
            serde_json::json!({"KeyName": "", "PrimaryKey": primary, "Rights": ["Send"]}),
            serde_json::json!({"KeyName": "k", "PrimaryKey": primary, "Rights": []}),
            serde_json::json!({"KeyName": "k", "PrimaryKey": primary, "Rights": ["Read"]}),
            serde_json::json!({"KeyName": "k", "PrimaryKey": "short", "Rights": ["Send"]}),
        ] {
            assert!(parse_rule(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_published_key_is_refused_off_loopback_only() {
        let loopback = [
            "127.0.0.1:5672".parse().unwrap(),
            "[::1]:5300".parse().unwrap(),
        ];
        let exposed = "0.0.0.0:5672".parse().unwrap();
        assert!(check_exposure(&SasKeys::emulator(), loopback).is_ok());
        let refused = check_exposure(&SasKeys::emulator(), [exposed]).unwrap_err();
        assert!(refused.contains("--policies"), "{refused}");
        let own = SasKeys::new([("k", "a key of our own")]);
        assert!(check_exposure(&own, [exposed]).is_ok());
    }
}
