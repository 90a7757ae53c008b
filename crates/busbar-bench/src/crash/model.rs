//! What the crash campaign's client knows for sure, and the check of a restarted broker against
//! it. Each message (an entity and the id its body carries) has the set of places it may be in:
//! an operation started adds its destination, an operation acknowledged narrows the set to its
//! destination, and evidence (an accepted send, a delivery) rules out "never stored". A session's
//! state may be the last acknowledged value or any set after it whose answer never came.

use std::collections::{BTreeMap, BTreeSet};

use super::link::Settlement;

/// Where a message may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Place {
    /// Its send was not stored (refused, or cut by the kill before it was).
    NeverStored,
    /// In its queue or subscription.
    Active,
    /// In its dead-letter sub-queue.
    DeadLettered,
    /// Completed: gone for good.
    Completed,
}

impl Place {
    fn after(settlement: Settlement) -> Place {
        match settlement {
            Settlement::Complete => Place::Completed,
            Settlement::Abandon => Place::Active,
            Settlement::DeadLetter => Place::DeadLettered,
        }
    }
}

/// Operations the broker acknowledged during the workloads (the checks' own are not counted).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    /// Sends accepted.
    pub(crate) sends: u64,
    /// Completes, abandons and dead-letters answered through `$management`.
    pub(crate) settlements: u64,
    /// Settlements sent on the link (never confirmed to this client).
    pub(crate) link_settlements: u64,
    /// Session states set.
    pub(crate) states: u64,
}

/// A message: its entity (queue or subscription path) and id.
pub(crate) type MessageKey = (String, String);

/// The model: every message the workload sent since the last check, and the sessions' states.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    pub(crate) counts: Counts,
    messages: BTreeMap<MessageKey, BTreeSet<Place>>,
    /// How many settlements of each message started.
    settlements: BTreeMap<MessageKey, u32>,
    /// What happened to each message, in order, for the failure report.
    history: BTreeMap<MessageKey, Vec<String>>,
    states: BTreeMap<String, Vec<Option<String>>>,
}

/// What a restarted broker holds: where each message was found (more than one place is a
/// duplicate) and each session's state.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) messages: BTreeMap<MessageKey, Vec<Place>>,
    pub(crate) states: BTreeMap<String, Option<String>>,
}

impl Found {
    /// How many of the messages were found dead-lettered.
    pub(crate) fn dead_lettered(&self) -> usize {
        let places = self.messages.values().flatten();
        places
            .filter(|place| **place == Place::DeadLettered)
            .count()
    }

    pub(crate) fn add(&mut self, entity: &str, id: &str, place: Place) {
        self.messages
            .entry((entity.to_owned(), id.to_owned()))
            .or_default()
            .push(place);
    }
}

/// What a check looked at, and what it found wrong.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub(crate) messages: usize,
    pub(crate) states: usize,
    pub(crate) failures: Vec<String>,
}

fn key(entity: &str, id: &str) -> MessageKey {
    (entity.to_owned(), id.to_owned())
}

impl Ledger {
    fn note(&mut self, entity: &str, id: &str, event: String) {
        self.history.entry(key(entity, id)).or_default().push(event);
    }

    /// A send is about to go out.
    pub(crate) fn sending(&mut self, entity: &str, id: &str) {
        self.note(entity, id, "sending".into());
        self.messages.insert(
            key(entity, id),
            BTreeSet::from([Place::NeverStored, Place::Active]),
        );
    }

    /// The send was accepted, or the message was delivered: it was stored.
    pub(crate) fn stored(&mut self, entity: &str, id: &str, how: &str) {
        self.note(entity, id, how.to_owned());
        if let Some(places) = self.messages.get_mut(&key(entity, id)) {
            places.remove(&Place::NeverStored);
        }
    }

    /// The send was refused.
    pub(crate) fn refused(&mut self, entity: &str, id: &str) {
        self.note(entity, id, "refused".into());
        self.messages
            .insert(key(entity, id), BTreeSet::from([Place::NeverStored]));
    }

    /// Whether the workload sent this message since the last check.
    pub(crate) fn knows(&self, entity: &str, id: &str) -> bool {
        self.messages.contains_key(&key(entity, id))
    }

    /// A settlement went out; until it is acknowledged the message may be either side of it.
    /// Returns the settlement's number, for [`Ledger::settled`].
    pub(crate) fn settling(
        &mut self,
        entity: &str,
        id: &str,
        settlement: Settlement,
        how: &str,
    ) -> u32 {
        self.note(entity, id, format!("{settlement:?} {how}"));
        self.messages
            .entry(key(entity, id))
            .or_default()
            .insert(Place::after(settlement));
        let count = self.settlements.entry(key(entity, id)).or_default();
        *count += 1;
        *count
    }

    /// The broker acknowledged settlement number `number`: the message is where it put it,
    /// unless a later settlement started meanwhile (an abandoned message is receivable again
    /// before the abandon is answered, which waits for it to be stored).
    pub(crate) fn settled(&mut self, entity: &str, id: &str, settlement: Settlement, number: u32) {
        self.note(entity, id, format!("{settlement:?} acknowledged"));
        if self.settlements.get(&key(entity, id)) == Some(&number) {
            self.messages
                .insert(key(entity, id), BTreeSet::from([Place::after(settlement)]));
        }
    }

    /// A set-session-state went out.
    pub(crate) fn setting_state(&mut self, session: &str, state: &str) {
        self.states
            .entry(session.to_owned())
            .or_insert_with(|| vec![None])
            .push(Some(state.to_owned()));
    }

    /// The broker acknowledged it: this is the state now.
    pub(crate) fn state_set(&mut self, session: &str, state: Option<&str>) {
        self.states
            .insert(session.to_owned(), vec![state.map(str::to_owned)]);
    }

    /// Checks what the restarted broker holds. Afterwards the messages are forgotten (the check
    /// drained them) and the states found are the known ones.
    pub(crate) fn check(&mut self, found: &Found) -> Verdict {
        let mut verdict = Verdict::default();
        let keys: BTreeSet<&MessageKey> =
            self.messages.keys().chain(found.messages.keys()).collect();
        for key @ (entity, id) in keys {
            verdict.messages += 1;
            let places = found.messages.get(key).map_or(&[][..], Vec::as_slice);
            let Some(possible) = self.messages.get(key) else {
                verdict
                    .failures
                    .push(format!("{entity}: {id} found in {places:?} was never sent (or came back after being drained)"));
                continue;
            };
            let allowed = match places {
                [] => {
                    possible.contains(&Place::NeverStored) || possible.contains(&Place::Completed)
                }
                [place] => possible.contains(place),
                _ => false,
            };
            if !allowed {
                let found = if places.is_empty() {
                    "missing".to_owned()
                } else {
                    format!("found in {places:?}")
                };
                let history = self.history.get(key).cloned().unwrap_or_default();
                verdict.failures.push(format!(
                    "{entity}: {id} {found}, but the client knows it is in {possible:?} \
                     (the client saw: {})",
                    history.join(", ")
                ));
            }
        }
        for (session, possible) in &self.states {
            verdict.states += 1;
            let state = found.states.get(session).cloned().flatten();
            if !possible.contains(&state) {
                verdict.failures.push(format!(
                    "session {session}: state {state:?}, but the client knows one of {possible:?}"
                ));
            }
        }
        self.messages.clear();
        self.history.clear();
        self.settlements.clear();
        for (session, state) in &found.states {
            self.state_set(session, state.as_deref());
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &str = "queue";

    fn found(entries: &[(&str, Place)]) -> Found {
        let mut found = Found::default();
        for (id, place) in entries {
            found.add(Q, id, *place);
        }
        found
    }

    fn failures(ledger: &mut Ledger, found: &Found) -> usize {
        ledger.check(found).failures.len()
    }

    #[test]
    fn an_acknowledged_send_must_be_there_and_an_uncertain_one_may_not() {
        let mut ledger = Ledger::default();
        ledger.sending(Q, "a");
        ledger.stored(Q, "a", "accepted");
        ledger.sending(Q, "b");
        assert_eq!(failures(&mut ledger, &found(&[])), 1, "a was acknowledged");
        ledger.sending(Q, "a");
        ledger.stored(Q, "a", "accepted");
        ledger.sending(Q, "b");
        assert_eq!(
            failures(
                &mut ledger,
                &found(&[("a", Place::Active), ("b", Place::Active)])
            ),
            0
        );
    }

    #[test]
    fn settlements_move_messages_once_acknowledged() {
        let mut ledger = Ledger::default();
        let setup = |ledger: &mut Ledger| {
            for id in ["done", "dead", "maybe"] {
                ledger.sending(Q, id);
                ledger.stored(Q, id, "accepted");
            }
            let done = ledger.settling(Q, "done", Settlement::Complete, "on the link");
            ledger.settled(Q, "done", Settlement::Complete, done);
            let dead = ledger.settling(Q, "dead", Settlement::DeadLetter, "on the link");
            ledger.settled(Q, "dead", Settlement::DeadLetter, dead);
            ledger.settling(Q, "maybe", Settlement::Complete, "on the link");
        };
        setup(&mut ledger);
        let right = found(&[("dead", Place::DeadLettered), ("maybe", Place::Active)]);
        assert_eq!(failures(&mut ledger, &right), 0);
        setup(&mut ledger);
        let wrong = found(&[("done", Place::Active), ("dead", Place::Active)]);
        assert_eq!(
            failures(&mut ledger, &wrong),
            2,
            "a completed one came back"
        );
    }

    #[test]
    fn an_acknowledgement_overtaken_by_a_later_settlement_narrows_nothing() {
        let mut ledger = Ledger::default();
        ledger.sending(Q, "a");
        let abandon = ledger.settling(Q, "a", Settlement::Abandon, "through $management");
        ledger.settling(Q, "a", Settlement::Complete, "on the link");
        ledger.settled(Q, "a", Settlement::Abandon, abandon);
        assert_eq!(
            failures(&mut ledger, &found(&[])),
            0,
            "the complete may be stored"
        );
    }

    #[test]
    fn duplicates_and_strangers_fail() {
        let mut ledger = Ledger::default();
        ledger.sending(Q, "a");
        let twice = found(&[
            ("a", Place::Active),
            ("a", Place::DeadLettered),
            ("x", Place::Active),
        ]);
        assert_eq!(failures(&mut ledger, &twice), 2);
    }

    #[test]
    fn a_session_state_is_the_last_acknowledged_or_a_later_one() {
        let mut ledger = Ledger::default();
        ledger.setting_state("s", "1");
        ledger.state_set("s", Some("1"));
        ledger.setting_state("s", "2");
        let mut found = Found::default();
        found.states.insert("s".into(), Some("2".into()));
        assert_eq!(failures(&mut ledger, &found), 0);
        assert_eq!(
            ledger.states["s"],
            vec![Some("2".to_owned())],
            "carried forward"
        );
        found.states.insert("s".into(), None);
        assert_eq!(failures(&mut ledger, &found), 1, "the state was lost");
    }
}
