//! Invariant check for tests: one holder per session and one session per holder, deadlines in
//! step with locks, waits in step with their deadlines, no receiver left waiting while a session
//! is free, and the core's own invariants.

use super::SessionEntity;

impl SessionEntity {
    /// Checks the structural invariants; O(n), meant for tests after every step.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.core.check_invariants()?;
        if self.owners.len() != self.held.len() {
            return Err(format!(
                "{} owners for {} held sessions",
                self.owners.len(),
                self.held.len()
            ));
        }
        for (session, held) in &self.held {
            if self.owners.get(&held.owner) != Some(session) {
                return Err(format!(
                    "session {session} is held by a receiver that holds another"
                ));
            }
            if !self
                .lock_deadlines
                .contains(&(held.locked_until, session.clone()))
            {
                return Err(format!("lock of session {session} has no deadline"));
            }
            if self.waiting.contains_key(&held.owner) {
                return Err(format!("receiver {} holds a session and waits", held.owner));
            }
        }
        if self.lock_deadlines.len() != self.held.len() {
            return Err("a lock deadline without a held session".to_owned());
        }
        if self.wait_deadlines.len() != self.waiting.len() {
            return Err("waits and wait deadlines out of step".to_owned());
        }
        for (owner, (ticket, until)) in &self.waiting {
            if !self.wait_deadlines.contains(&(*until, *ticket, *owner)) {
                return Err(format!("wait of receiver {owner} has no deadline"));
            }
        }
        if self.ready.len() != self.queued.len() {
            return Err("ready queue and its membership set out of step".to_owned());
        }
        if !self.waiting.is_empty() {
            let free = self.core.sessions().find(|session| {
                self.core.session_has_available(session)
                    && !self.held.keys().any(|held| held.as_str() == *session)
            });
            if let Some(session) = free {
                return Err(format!("session {session} is free while receivers wait"));
            }
        }
        Ok(())
    }
}
