//! `busbar-bench`: the end-to-end load tool. It drives an AMQP 1.0 broker over loopback with an
//! independent client (fe2o3-amqp) and prints Markdown tables and JSON; `cargo xtask bench`
//! starts the brokers and calls it.

mod args;
mod backlog_rss;
mod client;
mod crash;
mod entities;
mod error;
mod flows;
mod machine;
mod matrix;
mod probe;
mod report;
mod scenario;
mod slow_handshakes;
mod transactions;
mod transport;

use std::path::Path;
use std::process::ExitCode;

use crate::args::{Command, RunOptions};
use crate::error::BenchError;
use crate::report::Report;

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let outcome = args::parse(&arguments).and_then(|command| match command {
        Command::Help => {
            println!("{}", args::USAGE);
            Ok(())
        }
        Command::QueueNames => {
            for queue in 0..scenario::QUEUE_COUNT {
                println!("{}", entities::queue_name(queue));
            }
            Ok(())
        }
        Command::BusbarConfig => {
            println!("{}", entities::busbar_config());
            Ok(())
        }
        Command::MachineProbe(dir) => {
            let reading = machine::probe(&dir).map_err(|source| BenchError::File {
                path: dir.display().to_string(),
                source,
            })?;
            println!("{reading}");
            Ok(())
        }
        Command::Run(options) => run(options),
        Command::Transactions(options) => runtime()?.block_on(transactions::run(options)),
        Command::SlowHandshakes(options) => runtime()?.block_on(slow_handshakes::run(options)),
        Command::Crash(options) => crash::run(&options),
        Command::BacklogRss(options) => runtime()?.block_on(backlog_rss::run(options)),
        Command::Compare { ours, peer } => compare(&ours, &peer),
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error @ BenchError::Usage(_)) => {
            eprintln!("busbar-bench: {error}\n\n{}", args::USAGE);
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("busbar-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The multi-thread tokio runtime the clients run on.
fn runtime() -> Result<tokio::runtime::Runtime, BenchError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| BenchError::File {
            path: "tokio runtime".into(),
            source,
        })
}

fn run(options: RunOptions) -> Result<(), BenchError> {
    let json = options.json.clone();
    let report = if options.matrix {
        runtime()?.block_on(matrix::Matrix::new(options)?.run())?
    } else {
        runtime()?.block_on(scenario::Runner::new(options)?.run())?
    };
    println!("{}", report::run_table(&report));
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report).map_err(|source| BenchError::Report {
            path: path.display().to_string(),
            source,
        })?;
        std::fs::write(&path, text).map_err(|source| BenchError::File {
            path: path.display().to_string(),
            source,
        })?;
    }
    Ok(())
}

fn read_report(path: &Path) -> Result<Report, BenchError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::File {
        path: name.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| BenchError::Report { path: name, source })
}

fn compare(ours: &[std::path::PathBuf], peer: &[std::path::PathBuf]) -> Result<(), BenchError> {
    let ours = ours
        .iter()
        .map(|path| read_report(path))
        .collect::<Result<Vec<_>, _>>()?;
    let peers = peer
        .iter()
        .map(|path| read_report(path))
        .collect::<Result<Vec<_>, _>>()?;
    println!("{}", report::comparison_table(&ours, &peers));
    Ok(())
}
