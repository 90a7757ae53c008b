//! Criterion benches: evaluating a typical SQL filter, a correlation filter, a SQL action, and
//! fanning one message out to 1 / 10 / 100 subscriptions (half of them matching).

#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use busbar_rules::{
    CorrelationFilter, Filter, Guid, Message, Rule, RuleSet, SqlAction, SqlFilter, Subscription,
    Timestamp, Value, fan_out,
};
use criterion::{Criterion, criterion_group, criterion_main};

fn message() -> Message {
    Message {
        message_id: Some("9f3c5a1e-order-17".into()),
        correlation_id: Some("order-17".into()),
        label: Some("order.created".into()),
        content_type: Some("application/json".into()),
        sequence_number: Some(1_234),
        enqueued_time: Some(Timestamp(1_700_000_000_000)),
        ..Message::default()
    }
    .with_user("tenant", Value::Str("contoso".into()))
    .with_user("region", Value::Str("emea".into()))
    .with_user("priority", Value::Int(3))
    .with_user("amount", Value::Float(125.5))
    .with_user("express", Value::Bool(false))
}

const TYPICAL_SQL: &str = "sys.Label LIKE 'order.%' AND region IN ('emea', 'apac') \
                           AND (priority >= 2 OR amount > 1000.0) AND NOT EXISTS(cancelled)";

fn no_guid() -> Guid {
    Guid([0; 16])
}

fn filters(c: &mut Criterion) {
    let message = message();
    let sql = SqlFilter::parse(TYPICAL_SQL).unwrap();
    c.bench_function("sql_filter/typical", |b| {
        b.iter(|| black_box(sql.evaluate(black_box(&message), &mut no_guid)))
    });
    let correlation = CorrelationFilter {
        label: Some("order.created".into()),
        content_type: Some("application/json".into()),
        properties: vec![("tenant".into(), Value::Str("contoso".into()))],
        ..CorrelationFilter::default()
    };
    c.bench_function("correlation_filter/three_properties", |b| {
        b.iter(|| black_box(correlation.matches(black_box(&message))))
    });
    c.bench_function("sql_filter/parse_typical", |b| {
        b.iter(|| black_box(SqlFilter::parse(black_box(TYPICAL_SQL))))
    });
    let action = SqlAction::parse("SET priority = priority + 1; SET sys.Label = 'routed'").unwrap();
    c.bench_function("sql_action/two_statements", |b| {
        b.iter(|| black_box(action.apply(black_box(&message), &mut no_guid)))
    });
}

/// Half the subscriptions select the message (SQL filter on `region`), half do not.
fn fan_out_bench(c: &mut Criterion) {
    let message = message();
    let sizes: &[usize] = if cfg!(debug_assertions) {
        &[1, 10]
    } else {
        &[1, 10, 100]
    };
    for &count in sizes {
        let rule_sets: Vec<RuleSet> = (0..count)
            .map(|i| {
                let region = if i % 2 == 0 { "emea" } else { "amer" };
                let filter = SqlFilter::parse(&format!("region = '{region}' AND priority > 1"));
                let rule = Rule::new("by-region", Filter::Sql(filter.unwrap()), None).unwrap();
                RuleSet::with_rules(vec![rule]).unwrap()
            })
            .collect();
        let subscriptions: Vec<Subscription<'_>> = rule_sets
            .iter()
            .map(|rules| Subscription {
                rules,
                dead_letter_on_filter_error: true,
            })
            .collect();
        c.bench_function(
            &format!("fan_out/{count}_subscriptions_half_matching"),
            |b| b.iter(|| black_box(fan_out(&subscriptions, black_box(&message), &mut no_guid))),
        );
    }
}

criterion_group!(benches, filters, fan_out_bench);
criterion_main!(benches);
