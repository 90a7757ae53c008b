//! Invalid configurations: each is refused with a message naming the file, the entity and the field.
#![allow(clippy::unwrap_used)]

use busbar_broker::config::{self, ConfigError};

/// A configuration with the given queue and topic array contents.
fn with_entities(queues: &str, topics: &str) -> String {
    format!(
        r#"{{"UserConfig": {{"Namespaces": [{{"Name": "sbemulatorns", "Queues": [{queues}], "Topics": [{topics}]}}],
            "Logging": {{"Type": "Console"}}}}}}"#
    )
}

/// A configuration with one queue `orders` with the given properties.
fn with_queue_properties(properties: &str) -> String {
    with_entities(
        &format!(r#"{{"Name": "orders", "Properties": {{{properties}}}}}"#),
        "",
    )
}

/// A configuration with topic `t`, subscription `s`, and the given rule.
fn with_rule(rule: &str) -> String {
    with_entities(
        "",
        &format!(r#"{{"Name": "t", "Subscriptions": [{{"Name": "s", "Rules": [{rule}]}}]}}"#),
    )
}

fn refusal(text: &str) -> String {
    config::parse(text, "config.json").unwrap_err().to_string()
}

#[test]
fn service_bus_limits_on_queue_properties() {
    let table = [
        (
            r#""LockDuration": "PT10M""#,
            r#"queue "orders": LockDuration "PT10M" is above the maximum of 5 minutes"#,
        ),
        (
            r#""LockDuration": "PT4S""#,
            r#"queue "orders": LockDuration "PT4S" is below the minimum of 5 seconds"#,
        ),
        (
            r#""MaxDeliveryCount": 0"#,
            r#"queue "orders": MaxDeliveryCount 0 is below the minimum of 1"#,
        ),
        (
            r#""MaxSizeInMegabytes": 0"#,
            r#"queue "orders": MaxSizeInMegabytes 0 is below the minimum of 1"#,
        ),
        (
            r#""MaxMessageSizeInKilobytes": 0"#,
            r#"queue "orders": MaxMessageSizeInKilobytes 0 is below the minimum of 1"#,
        ),
        (
            r#""MaxMessageSizeInKilobytes": 102401"#,
            r#"queue "orders": MaxMessageSizeInKilobytes 102401 is above the maximum of 102400"#,
        ),
        (
            r#""MaxDeliveryCount": "3""#,
            r#"queue "orders": MaxDeliveryCount must be a whole number, found "3""#,
        ),
        (
            r#""DuplicateDetectionHistoryTimeWindow": "PT4S""#,
            r#"queue "orders": DuplicateDetectionHistoryTimeWindow "PT4S" is below the minimum of 5 seconds"#,
        ),
        (
            r#""DuplicateDetectionHistoryTimeWindow": "P8D""#,
            r#"queue "orders": DuplicateDetectionHistoryTimeWindow "P8D" is above the maximum of 7 days"#,
        ),
        (
            r#""DefaultMessageTimeToLive": "PT0.5S""#,
            r#"queue "orders": DefaultMessageTimeToLive "PT0.5S" is below the minimum of 1 second"#,
        ),
        (
            r#""LockDuration": "1 minute""#,
            r#"queue "orders": LockDuration "1 minute" is not an ISO-8601 duration such as "PT1M" (it does not start with 'P')"#,
        ),
        (
            r#""LockDuration": "PT1S1M""#,
            r#"queue "orders": LockDuration "PT1S1M" is not an ISO-8601 duration such as "PT1M" (components must appear in the order Y, M, D, T, H, M, S, each at most once)"#,
        ),
        (
            r#""LockDuration": 60"#,
            r#"queue "orders": LockDuration must be a string, found 60"#,
        ),
        (
            r#""RequiresSession": "true""#,
            r#"queue "orders": RequiresSession must be true or false, found "true""#,
        ),
        (
            r#""ForwardTo": "bad name""#,
            r#"queue "orders": ForwardTo "bad name" is not a valid entity name"#,
        ),
    ];
    for (properties, message) in table {
        assert_eq!(
            refusal(&with_queue_properties(properties)),
            format!("config.json: {message}"),
            "{properties}"
        );
    }
}

#[test]
fn subscription_and_topic_properties_are_checked_in_their_scope() {
    let subscription = |properties: &str| {
        with_entities(
            "",
            &format!(
                r#"{{"Name": "t", "Subscriptions": [{{"Name": "s", "Properties": {{{properties}}}}}]}}"#
            ),
        )
    };
    assert_eq!(
        refusal(&subscription(r#""LockDuration": "PT6M""#)),
        r#"config.json: topic "t" subscription "s": LockDuration "PT6M" is above the maximum of 5 minutes"#
    );
    assert_eq!(
        refusal(&subscription(r#""RequiresDuplicateDetection": true"#)),
        r#"config.json: topic "t" subscription "s": unknown property "RequiresDuplicateDetection" in Properties"#
    );
    // The size quota is the topic's, as in Service Bus.
    assert!(
        refusal(&subscription(r#""MaxSizeInMegabytes": 1"#))
            .starts_with(r#"config.json: topic "t" subscription "s": unknown property "MaxSizeInMegabytes" in Properties"#)
    );
    let topic = with_entities(
        "",
        r#"{"Name": "t", "Properties": {"LockDuration": "PT1M"}, "Subscriptions": []}"#,
    );
    assert_eq!(
        refusal(&topic),
        r#"config.json: topic "t": unknown property "LockDuration" in Properties"#
    );
}

#[test]
fn unknown_properties_are_refused_with_a_suggestion() {
    assert_eq!(
        refusal(&with_queue_properties(r#""LockDurration": "PT1M""#)),
        r#"config.json: queue "orders": unknown property "LockDurration" in Properties (did you mean "LockDuration"?)"#
    );
    assert_eq!(
        refusal(&with_entities(r#"{"Name": "orders", "Propertes": {}}"#, "")),
        r#"config.json: queue "orders": unknown property "Propertes" (did you mean "Properties"?)"#
    );
    assert_eq!(
        refusal(r#"{"UserConfig": {"Namespaces": [{"Name": "ns"}], "Loging": {"Type": "File"}}}"#),
        r#"config.json: UserConfig: unknown property "Loging" (did you mean "Logging"?)"#
    );
    assert_eq!(
        refusal(r#"{"$schema": "x", "UserConfig": {}}"#),
        r#"config.json: the document: unknown property "$schema""#
    );
}

#[test]
fn names_follow_the_service_bus_pattern() {
    let invalid = "is not a valid name (letters, digits, '_', '-', '.', '/', starting and ending with a letter or digit)";
    for name in ["-orders", "orders.", "or ders", "$orders", ""] {
        let text = with_entities(&format!(r#"{{"Name": "{name}"}}"#), "");
        assert_eq!(
            refusal(&text),
            format!("config.json: UserConfig.Namespaces[0].Queues[0]: Name {name:?} {invalid}")
        );
    }
    assert_eq!(
        refusal(&with_entities(r#"{"Properties": {}}"#, "")),
        "config.json: UserConfig.Namespaces[0].Queues[0]: Name is required"
    );
    assert_eq!(
        refusal(&with_entities(r#"{"Name": 7}"#, "")),
        "config.json: UserConfig.Namespaces[0].Queues[0]: Name must be a string, found 7"
    );
    let long = "s".repeat(51);
    let text = with_entities(
        "",
        &format!(r#"{{"Name": "t", "Subscriptions": [{{"Name": "{long}"}}]}}"#),
    );
    assert_eq!(
        refusal(&text),
        format!(
            r#"config.json: topic "t" Subscriptions[0]: Name "{long}" is longer than 50 characters"#
        )
    );
    let text = with_rule(
        r#"{"Name": "r!", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "1=1"}}}"#,
    );
    assert!(refusal(&text).starts_with(
        r#"config.json: topic "t" subscription "s" Rules[0]: Name "r!" is not a valid name"#
    ));
}

#[test]
fn names_are_unique_ignoring_case() {
    assert_eq!(
        refusal(&with_entities(
            r#"{"Name": "orders"}"#,
            r#"{"Name": "Orders", "Subscriptions": []}"#
        )),
        r#"config.json: topic "Orders": the name is already used by queue "orders" (names are case-insensitive)"#
    );
    assert_eq!(
        refusal(&with_entities(r#"{"Name": "a"}, {"Name": "A"}"#, "")),
        r#"config.json: queue "A": the name is already used by queue "a" (names are case-insensitive)"#
    );
    assert_eq!(
        refusal(&with_entities(
            "",
            r#"{"Name": "t", "Subscriptions": [{"Name": "s"}, {"Name": "S"}]}"#
        )),
        r#"config.json: topic "t" subscription "S": the name is already used by subscription "s" (names are case-insensitive)"#
    );
    let sql = r#""Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "1=1"}}"#;
    assert_eq!(
        refusal(&with_rule(&format!(
            r#"{{"Name": "r", {sql}}}, {{"Name": "R", {sql}}}"#
        ))),
        r#"config.json: topic "t" subscription "s" rule "R": the name is already used by rule "r" (names are case-insensitive)"#
    );
    // The same subscription name under two topics is fine.
    let text = with_entities(
        "",
        r#"{"Name": "t1", "Subscriptions": [{"Name": "s"}]}, {"Name": "t2", "Subscriptions": [{"Name": "s"}]}"#,
    );
    assert!(config::parse(&text, "config.json").is_ok());
}

#[test]
fn forwarding_targets_must_exist() {
    assert_eq!(
        refusal(&with_queue_properties(r#""ForwardTo": "nowhere""#)),
        r#"config.json: queue "orders": ForwardTo "nowhere" names no queue or topic of this namespace"#
    );
    let to_subscription = with_entities(
        r#"{"Name": "a", "Properties": {"ForwardDeadLetteredMessagesTo": "t/Subscriptions/s"}}"#,
        r#"{"Name": "t", "Subscriptions": [{"Name": "s"}]}"#,
    );
    assert_eq!(
        refusal(&to_subscription),
        r#"config.json: queue "a": ForwardDeadLetteredMessagesTo "t/Subscriptions/s" names no queue or topic of this namespace"#
    );
    // Targets are found whatever their case.
    let text = with_entities(
        r#"{"Name": "a", "Properties": {"ForwardTo": "B"}}, {"Name": "b"}"#,
        "",
    );
    assert!(config::parse(&text, "config.json").is_ok());
}

#[test]
fn forwarding_loops_are_refused() {
    let self_loop = with_entities(r#"{"Name": "a", "Properties": {"ForwardTo": "a"}}"#, "");
    assert_eq!(
        refusal(&self_loop),
        r#"config.json: queue "a": ForwardTo "a" makes a forwarding loop: a -> a"#
    );
    let dead_letter_loop = with_entities(
        r#"{"Name": "a", "Properties": {"ForwardDeadLetteredMessagesTo": "b"}}, {"Name": "b", "Properties": {"ForwardTo": "a"}}"#,
        "",
    );
    assert_eq!(
        refusal(&dead_letter_loop),
        r#"config.json: queue "a": ForwardDeadLetteredMessagesTo "b" makes a forwarding loop: a -> b -> a"#
    );
    let through_topic = with_entities(
        r#"{"Name": "a", "Properties": {"ForwardTo": "t"}}"#,
        r#"{"Name": "t", "Subscriptions": [{"Name": "keep"}, {"Name": "s", "Properties": {"ForwardTo": "a"}}]}"#,
    );
    assert_eq!(
        refusal(&through_topic),
        r#"config.json: queue "a": ForwardTo "t" makes a forwarding loop: a -> t -> t/Subscriptions/s -> a"#
    );
    // Found from the topic first, the loop is still reported from its first forwarding hop.
    let subscription_to_own_topic = with_entities(
        "",
        r#"{"Name": "t", "Subscriptions": [{"Name": "s", "Properties": {"ForwardTo": "t"}}]}"#,
    );
    assert_eq!(
        refusal(&subscription_to_own_topic),
        r#"config.json: topic "t" subscription "s": ForwardTo "t" makes a forwarding loop: t/Subscriptions/s -> t -> t/Subscriptions/s"#
    );
}

#[test]
fn forwarding_chains_of_more_than_four_hops_are_refused() {
    let chain = |length: usize| {
        let queues: Vec<String> = (1..=length)
            .map(|index| {
                format!(
                    r#"{{"Name": "q{index}", "Properties": {{"ForwardTo": "q{}"}}}}"#,
                    index + 1
                )
            })
            .chain(std::iter::once(format!(r#"{{"Name": "q{}"}}"#, length + 1)))
            .collect();
        with_entities(&queues.join(","), "")
    };
    assert!(config::parse(&chain(4), "config.json").is_ok());
    assert_eq!(
        refusal(&chain(5)),
        "config.json: queue \"q1\": ForwardTo \"q2\" starts a forwarding chain of 5 hops, more than the 4 Service Bus \
         allows: q1 -> q2 -> q3 -> q4 -> q5 -> q6"
    );
    // A long chain is refused quickly and without deep recursion.
    assert!(refusal(&chain(5_000)).contains("starts a forwarding chain of 5000 hops"));
    // Topic fan-out is not a hop: a -> t -> t/Subscriptions/s -> b is two hops.
    let fan_out = with_entities(
        r#"{"Name": "a", "Properties": {"ForwardTo": "t"}}, {"Name": "b"}"#,
        r#"{"Name": "t", "Subscriptions": [{"Name": "s", "Properties": {"ForwardTo": "b"}}]}"#,
    );
    assert!(config::parse(&fan_out, "config.json").is_ok());
}

#[test]
fn rules_need_exactly_one_well_formed_filter() {
    let scope = r#"config.json: topic "t" subscription "s" rule "r": "#;
    let table = [
        (r#"{"Name": "r"}"#, "Properties is required"),
        (
            r#"{"Name": "r", "Properties": {}}"#,
            "FilterType is required",
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Regex"}}"#,
            r#"FilterType "Regex" must be "Correlation" or "Sql""#,
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Correlation"}}"#,
            r#"FilterType "Correlation" needs a CorrelationFilter"#,
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {}}}"#,
            "CorrelationFilter must set at least one property",
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"Subject": "x"}}}"#,
            r#"unknown property "Subject" in CorrelationFilter"#,
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"Properties": {}}}}"#,
            "CorrelationFilter.Properties must name at least one property",
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"Properties": {"p": null}}}}"#,
            r#"CorrelationFilter property "p" must be a string, number or boolean, found null"#,
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Correlation", "CorrelationFilter": {"To": 5}}}"#,
            "To must be a string, found 5",
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Sql"}}"#,
            r#"FilterType "Sql" needs a SqlFilter"#,
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Sql", "SqlFilter": {}}}"#,
            "SqlFilter.SqlExpression is required",
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "1=1"}, "CorrelationFilter": {"To": "x"}}}"#,
            "a rule has either a CorrelationFilter or a SqlFilter, not both",
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "1=1"}, "Action": {"SqlExpression": " "}}}"#,
            "Action.SqlExpression is required",
        ),
    ];
    for (rule, message) in table {
        assert_eq!(
            refusal(&with_rule(rule)),
            format!("{scope}{message}"),
            "{rule}"
        );
    }
}

#[test]
fn malformed_sql_filters_and_actions_are_refused_with_their_position() {
    let scope = r#"config.json: topic "t" subscription "s" rule "r": "#;
    let table = [
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "color = = 'red'"}}}"#,
            r#"SqlFilter.SqlExpression "color = = 'red'": syntax error at position 9: "#,
        ),
        (
            r#"{"Name": "r", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "1=1"}, "Action": {"SqlExpression": "SET"}}}"#,
            r#"Action.SqlExpression "SET": syntax error at position 4: "#,
        ),
    ];
    for (rule, prefix) in table {
        let refusal = refusal(&with_rule(rule));
        assert!(
            refusal.starts_with(&format!("{scope}{prefix}")),
            "{refusal}"
        );
    }
}

#[test]
fn document_structure_errors() {
    let table = [
        ("{}", "config.json: the document: UserConfig is required"),
        (
            "[]",
            "config.json: the document: the entry must be an object, found an array",
        ),
        (
            r#"{"UserConfig": {"Namespaces": []}}"#,
            "config.json: UserConfig: Namespaces must contain exactly one namespace, found 0",
        ),
        (
            r#"{"UserConfig": {"Namespaces": [{"Name": "a"}, {"Name": "b"}]}}"#,
            "config.json: UserConfig: Namespaces must contain exactly one namespace, found 2",
        ),
        (
            r#"{"UserConfig": {"Namespaces": {"Name": "a"}}}"#,
            "config.json: UserConfig: Namespaces must be an array, found an object",
        ),
        (
            r#"{"UserConfig": {"Namespaces": [{"Name": "ns", "Queues": [], "Topic": []}]}}"#,
            r#"config.json: namespace "ns": unknown property "Topic" (did you mean "Topics"?)"#,
        ),
        (
            r#"{"UserConfig": {"Namespaces": [{"Name": "ns"}], "Logging": {"Type": "Syslog"}}}"#,
            r#"config.json: UserConfig: Logging.Type "Syslog" must be one of "File", "Console", "File,Console", "Console,File""#,
        ),
        (
            r#"{"UserConfig": {"Namespaces": [{"Name": "ns"}], "Logging": {}}}"#,
            "config.json: UserConfig: Logging.Type is required",
        ),
    ];
    for (text, message) in table {
        assert_eq!(refusal(text), message, "{text}");
    }
}

#[test]
fn syntax_errors_give_the_line_and_column_in_the_file_as_written() {
    let text = "{\n  // a comment keeps its line\n  \"UserConfig\": {,}\n}";
    let error = config::parse(text, "config.json").unwrap_err();
    assert!(
        matches!(
            error,
            ConfigError::Syntax {
                line: 3,
                column: 18,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "config.json: line 3, column 18: key must be a string"
    );
    assert_eq!(
        refusal("{\n /* never closed\n}"),
        "config.json: line 2, column 2: unterminated /* comment"
    );
    assert!(refusal("").starts_with("config.json: line 1, column 0: EOF while parsing"));
}

#[test]
fn unreadable_files_are_named() {
    let path = std::path::Path::new("/nonexistent/busbar/config.json");
    let error = config::load_file(path).unwrap_err();
    assert!(matches!(error, ConfigError::Read { .. }));
    assert!(
        error
            .to_string()
            .starts_with("/nonexistent/busbar/config.json: cannot read the file: "),
        "{error}"
    );
}

#[test]
fn a_property_written_twice_is_refused() {
    let text = "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"ns\", \"Queues\": [{\"Name\": \"q\",\n  \"Properties\": {\"LockDuration\": \"PT1M\",\n  \"LockDuration\": \"PT2M\"}}]}]}}";
    let message = refusal(text);
    assert!(
        message.starts_with(r#"config.json: line 3, column "#)
            && message.ends_with(r#": property "LockDuration" appears twice in the same object"#),
        "{message}"
    );
}

#[test]
fn each_kind_takes_only_the_statuses_service_bus_allows_it() {
    assert_eq!(
        refusal(&with_queue_properties(r#""Status": "Creating""#)),
        r#"config.json: queue "orders": Status "Creating" must be one of "Active", "Disabled", "SendDisabled", "ReceiveDisabled""#
    );
    let topic = with_entities(
        "",
        r#"{"Name": "t", "Properties": {"Status": "ReceiveDisabled"}, "Subscriptions": []}"#,
    );
    assert_eq!(
        refusal(&topic),
        r#"config.json: topic "t": Status "ReceiveDisabled" must be one of "Active", "Disabled", "SendDisabled""#
    );
    let subscription = with_entities(
        "",
        r#"{"Name": "t", "Subscriptions": [{"Name": "s", "Properties": {"Status": "SendDisabled"}}]}"#,
    );
    assert_eq!(
        refusal(&subscription),
        r#"config.json: topic "t" subscription "s": Status "SendDisabled" must be one of "Active", "Disabled", "ReceiveDisabled""#
    );
}
