//! The web explorer and its JSON API over HTTP against the in-memory control: pages need a
//! sign-in session, the session cookie is HttpOnly and SameSite=Strict, every POST needs the
//! session's CSRF token and a same-site Origin, sign-out ends the session, and hostile input
//! (bad cookies, forms, queries, JSON, oversized bodies) gets a 4xx, never a panic.

#![allow(clippy::unwrap_used)]

mod support;

use hyper::Method;
use support::{Client, KEY_NAME, Reply, SENDER_KEY_NAME, TestServer, queue_body};

const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

async fn server_with_queue() -> TestServer {
    let server = TestServer::start().await;
    let reply = server
        .client()
        .put("/q?api-version=2021-05", &queue_body(""))
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    server
}

/// A client without a SAS token (a browser).
fn browser(server: &TestServer) -> Client {
    server.client().with_token(None)
}

async fn post_form(client: &Client, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut all = vec![FORM];
    all.extend_from_slice(headers);
    client.send(Method::POST, path, &all, body).await
}

/// Signs in; returns the `Cookie` header value and the CSRF token of the overview's forms.
async fn signed_in(client: &Client) -> (String, String) {
    let body = format!("key_name={KEY_NAME}&key=any");
    let reply = post_form(client, "/explorer/sign-in", &[], &body).await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    let set_cookie = reply.headers["set-cookie"].to_str().unwrap().to_owned();
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let page = client
        .send(Method::GET, "/explorer", &[("cookie", &cookie)], "")
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let csrf = page
        .body
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    (cookie, csrf)
}

#[tokio::test]
async fn pages_without_a_session_redirect_to_sign_in_and_assets_are_open() {
    let server = server_with_queue().await;
    let client = browser(&server);
    for cookie in [
        None,
        Some("busbar_explorer=nonsense"),
        Some("busbar_explorer="),
    ] {
        let headers: Vec<(&str, &str)> = cookie.iter().map(|c| ("cookie", *c)).collect();
        let reply = client.send(Method::GET, "/explorer", &headers, "").await;
        assert_eq!(reply.status, 303);
        assert_eq!(reply.headers["location"], "/explorer/sign-in");
    }
    let css = client.get("/explorer/assets/explorer.css").await;
    assert_eq!((css.status, css.content_type()), (200, "text/css"));
    let form = client.get("/explorer/sign-in").await;
    assert!(form.body.contains("connection_string"), "{}", form.body);
}

#[tokio::test]
async fn sign_in_sets_a_strict_http_only_cookie_and_refuses_unknown_keys() {
    let server = server_with_queue().await;
    let client = browser(&server);
    let refused = post_form(&client, "/explorer/sign-in", &[], "key_name=Other&key=k").await;
    assert_eq!(refused.status, 401);
    assert!(!refused.headers.contains_key("set-cookie"));
    // A rule without Manage does not sign in either.
    let sender = format!("key_name={SENDER_KEY_NAME}&key=k");
    let refused = post_form(&client, "/explorer/sign-in", &[], &sender).await;
    assert_eq!(refused.status, 401);
    assert!(!refused.headers.contains_key("set-cookie"));
    let connection = format!(
        "connection_string=Endpoint%3Dsb%3A%2F%2Fx%3BSharedAccessKeyName%3D{KEY_NAME}%3BSharedAccessKey%3Dk"
    );
    let accepted = post_form(&client, "/explorer/sign-in", &[], &connection).await;
    assert_eq!(accepted.status, 303, "{}", accepted.body);
    let cookie = accepted.headers["set-cookie"].to_str().unwrap();
    for part in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(part), "{cookie}");
    }
    let (cookie, _) = signed_in(&client).await;
    let page = client
        .send(Method::GET, "/explorer", &[("cookie", &cookie)], "")
        .await;
    assert!(
        page.body.contains("data-count=\"q|active\""),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn posts_need_the_session_token_and_a_same_site_origin() {
    let server = server_with_queue().await;
    let client = browser(&server);
    let (cookie, csrf) = signed_in(&client).await;
    let purge = |token: &str| format!("csrf={token}&path=q&dead_letter=false");
    let with_cookie = [("cookie", cookie.as_str())];
    let forged = post_form(
        &client,
        "/explorer/purge",
        &with_cookie,
        &purge(&"0".repeat(64)),
    )
    .await;
    assert_eq!(forged.status, 403);
    let missing = post_form(&client, "/explorer/purge", &with_cookie, "path=q").await;
    assert_eq!(missing.status, 403);
    let cross_site = [
        ("cookie", cookie.as_str()),
        ("origin", "http://evil.example"),
    ];
    let other_origin = post_form(&client, "/explorer/purge", &cross_site, &purge(&csrf)).await;
    assert_eq!(other_origin.status, 403);
    // The in-memory control serves no explorer purge: the form got through to it.
    let allowed = post_form(&client, "/explorer/purge", &with_cookie, &purge(&csrf)).await;
    assert_eq!(allowed.status, 404, "{}", allowed.body);
    let signed_out = post_form(
        &client,
        "/explorer/sign-out",
        &with_cookie,
        &format!("csrf={csrf}"),
    )
    .await;
    assert_eq!(signed_out.status, 303);
    assert!(
        signed_out.headers["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    let after = client
        .send(Method::GET, "/explorer", &with_cookie, "")
        .await;
    assert_eq!(after.status, 303);
}

#[tokio::test]
async fn hostile_forms_and_queries_get_client_errors() {
    let server = server_with_queue().await;
    let client = browser(&server);
    let (cookie, csrf) = signed_in(&client).await;
    let with_cookie = [("cookie", cookie.as_str())];
    for (path, status) in [
        ("/explorer/entity?path=..%2F..%2Fetc", 404),
        ("/explorer/entity?path=q%2F%24DeadLetterQueue", 400),
        ("/explorer/entity?path=q&from=x%00&queue=%ff", 404),
        ("/explorer/message?path=q&seq=abc", 400),
        ("/explorer/nowhere", 400),
    ] {
        let reply = client.send(Method::GET, path, &with_cookie, "").await;
        assert_eq!(reply.status, status, "{path}: {}", reply.body);
    }
    let bad_send = format!("csrf={csrf}&path=q&properties=no-equals-sign");
    let reply = post_form(&client, "/explorer/send", &with_cookie, &bad_send).await;
    assert_eq!(reply.status, 400);
    let bad_schedule = format!("csrf={csrf}&path=q&scheduled=tomorrow");
    let reply = post_form(&client, "/explorer/send", &with_cookie, &bad_schedule).await;
    assert_eq!(reply.status, 400);
    let garbage = post_form(&client, "/explorer/sign-in", &[], "%ff%fe=%&&==&key_name").await;
    assert_eq!(garbage.status, 401);
    let huge = "a".repeat(2 * 1024 * 1024);
    let reply = post_form(&client, "/explorer/sign-in", &[], &huge).await;
    assert_eq!(reply.status, 413);
}

#[tokio::test]
async fn the_json_api_takes_the_sas_token_and_refuses_bad_input() {
    let server = server_with_queue().await;
    let unauthorised = browser(&server).get("/$busbar/api/namespace").await;
    assert_eq!(unauthorised.status, 401);
    let client = server.client();
    let namespace = client.get("/$busbar/api/namespace").await;
    assert_eq!(namespace.status, 200, "{}", namespace.body);
    let json: serde_json::Value = serde_json::from_str(&namespace.body).unwrap();
    assert_eq!(json["entities"][0]["path"], "q");
    assert_eq!(json["total"], 1);
    for (method, path, body, status) in [
        (Method::POST, "/$busbar/api/messages/q", "{not json", 400),
        (
            Method::POST,
            "/$busbar/api/messages/q",
            r#"{"body":"x","bogus":1}"#,
            400,
        ),
        (Method::GET, "/$busbar/api/messages/q?from=-1", "", 400),
        (
            Method::GET,
            "/$busbar/api/messages/q?subQueue=other",
            "",
            400,
        ),
        (
            Method::GET,
            "/$busbar/api/messages/q%2F%24DeadLetterQueue",
            "",
            400,
        ),
        (
            Method::PUT,
            "/$busbar/api/session-state/q",
            r#"{"state":null}"#,
            400,
        ),
        (Method::POST, "/$busbar/api/redrive/q", "[1,2]", 400),
        (Method::DELETE, "/$busbar/api/namespace", "", 404),
        (Method::GET, "/$busbar/api/messages/q", "", 404),
    ] {
        let reply = client.send(method.clone(), path, &[], body).await;
        assert_eq!(reply.status, status, "{method} {path}: {}", reply.body);
        assert!(reply.body.contains("\"error\""), "{}", reply.body);
    }
}
