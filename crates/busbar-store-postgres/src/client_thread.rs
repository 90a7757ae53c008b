//! The storage's connection lives on a thread of its own. The `postgres` client blocks on a
//! private runtime, which tokio forbids on a thread that drives async tasks, and the broker
//! recovers and drops its storage from such threads; here every call, the connection's opening
//! and its closing happen on this thread whoever asks.

use std::sync::mpsc;
use std::thread::JoinHandle;

use busbar_store::StoreError;
use postgres::Client;

use crate::url::DatabaseUrl;

type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// A connection served by its own thread.
pub(crate) struct ClientThread {
    /// Dropped first on drop, which ends the thread's loop.
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl ClientThread {
    /// Connects on a new thread.
    pub(crate) fn connect(url: &DatabaseUrl) -> Result<ClientThread, StoreError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (opened, opening) = mpsc::sync_channel(1);
        let url = url.clone();
        let thread = std::thread::Builder::new()
            .name("busbar-postgres".to_owned())
            .spawn(move || {
                let mut client = match url.connect() {
                    Ok(client) => client,
                    Err(error) => {
                        let _ = opened.send(Err(error));
                        return;
                    }
                };
                let _ = opened.send(Ok(()));
                while let Ok(job) = queue.recv() {
                    job(&mut client);
                }
            })
            .map_err(|error| StoreError::Database {
                operation: "start the connection thread",
                reason: error.to_string(),
            })?;
        let connection = ClientThread {
            jobs: Some(jobs),
            thread: Some(thread),
        };
        opening.recv().map_err(|_| gone())??;
        Ok(connection)
    }

    /// Runs `work` on the connection's thread and waits for its result.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |client| {
            let _ = reply.send(work(client));
        });
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }
}

impl Drop for ClientThread {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The connection's thread ended (it panicked): nothing more can be done on it.
fn gone() -> StoreError {
    StoreError::Database {
        operation: "reach the connection thread",
        reason: "the thread serving the connection has ended".to_owned(),
    }
}
