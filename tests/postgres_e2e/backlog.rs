//! The 1 GiB backlog on PostgreSQL (`support::deep_backlog`, which the file store runs in
//! `memory_budget.rs`): held under a 32 MiB budget with `VmRSS` bounded, a SIGKILL, then the
//! deferred message under it, the session's message in its middle and the rest in order, each
//! read back from the database.

use crate::pg_server::PgServer;
use crate::support::{Broker, deep_backlog, scratch_dir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_past_the_budget_is_held_in_postgres_and_drains_in_order_after_a_kill() {
    let url = PgServer::shared().create_database("backlog");
    let config = deep_backlog::config(&scratch_dir("busbar-pg-backlog"));
    let flags = ["--memory-budget", deep_backlog::BUDGET];
    let broker = Broker::on_postgres(config.clone(), &url, &flags);
    let filled = deep_backlog::fill(&broker).await;
    broker.kill();
    // The killed node's lease ends with its database session, so the new one serves at once.
    let broker = Broker::on_postgres(config, &url, &flags);
    deep_backlog::drain_after_restart(&broker, &filled).await;
}
