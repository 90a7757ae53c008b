//! Replays every request the five SDKs sent in the captured traces (`fixtures/exchanges/`:
//! request line, headers and body byte for byte, in capture order per SDK) against a fresh
//! server each, and checks each status code against the one the capture recorded. The tokens
//! reach the verifier exactly as the SDKs sent them, supplementary ones included.

#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;

use busbar_admin::atom::{QueueProperties, Timestamp};
use busbar_admin::control::NamespaceControl;
use busbar_admin::http::Clock;
use support::{TestServer, raw_exchange, status_of};

/// One captured request and the status the capture server answered.
struct Exchange {
    sdk: String,
    file: String,
    status: u16,
}

fn exchanges_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/exchanges")
}

/// The index, in capture order within each SDK.
fn exchanges() -> Vec<Exchange> {
    let index = std::fs::read_to_string(exchanges_dir().join("index.txt")).unwrap();
    index
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            Exchange {
                sdk: fields[0].to_owned(),
                file: fields[2].to_owned(),
                status: fields[3].parse().unwrap(),
            }
        })
        .collect()
}

/// The request as captured, made the connection's last so the reply ends at the close.
fn request_bytes(file: &str) -> (Vec<u8>, Vec<String>) {
    let captured = std::fs::read(exchanges_dir().join(file)).unwrap();
    let split = captured.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = std::str::from_utf8(&captured[..split]).unwrap();
    let body = &captured[split + 4..];
    let mut tokens = Vec::new();
    let mut request = Vec::new();
    for line in head.split("\r\n") {
        let name = line.split(':').next().unwrap().to_ascii_lowercase();
        if name == "connection" {
            continue;
        }
        if name.ends_with("authorization") {
            tokens.push(line.split_once(": ").unwrap().1.to_owned());
        }
        request.extend_from_slice(line.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"Connection: close\r\n\r\n");
    request.extend_from_slice(body);
    (request, tokens)
}

/// The paging traces list 106 queues the capture created out of band.
async fn create_paging_queues(server: &TestServer) {
    for index in 0..106 {
        let name = format!("page-{index:03}");
        server
            .control
            .create_queue(&name, QueueProperties::default())
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn every_captured_request_gets_the_captured_status() {
    let exchanges = exchanges();
    assert_eq!(exchanges.len(), 184, "every request of the traces");
    let sdks: BTreeSet<&str> = exchanges.iter().map(|e| e.sdk.as_str()).collect();
    assert_eq!(sdks.len(), 5);
    let mut mismatches = Vec::new();
    for sdk in sdks {
        // Before the first capture, so that every token is still valid.
        let captured_at = Timestamp::parse("2026-11-24T19:14:00Z").unwrap();
        let server =
            TestServer::start_with(|config| config.clock = Clock::fixed(captured_at)).await;
        let mut expected_tokens = BTreeSet::new();
        let mut paging_queues = false;
        for exchange in exchanges.iter().filter(|e| e.sdk == sdk) {
            if exchange.file.contains("list_queues_paging") && !paging_queues {
                create_paging_queues(&server).await;
                paging_queues = true;
            }
            let (request, tokens) = request_bytes(&exchange.file);
            expected_tokens.extend(tokens);
            let response = raw_exchange(server.addr, &request).await;
            let status = status_of(&response);
            if status != Some(exchange.status) {
                let excerpt: String = response.chars().take(600).collect();
                mismatches.push(format!(
                    "{}: expected {}, got {status:?}\n{excerpt}",
                    exchange.file, exchange.status
                ));
            }
        }
        let seen: BTreeSet<String> = server.tokens.lock().unwrap().iter().cloned().collect();
        assert_eq!(
            seen, expected_tokens,
            "{sdk}: the verifier saw the tokens as sent"
        );
        server.shut_down().await;
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}
