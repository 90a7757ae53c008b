//! Access rights of a shared-access authorization rule, and the claims operations need.

/// One right a rule grants or an operation needs (Service Bus's `AccessRights` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Claim {
    /// Administration: the admin API, the explorer, test controls. Implies Send and Listen.
    Manage,
    /// Sending to an entity.
    Send,
    /// Receiving, settling, peeking, renewing, session state.
    Listen,
}

impl Claim {
    /// The name Service Bus uses (`Manage`, `Send`, `Listen`), also in its error texts.
    pub fn name(self) -> &'static str {
        match self {
            Claim::Manage => "Manage",
            Claim::Send => "Send",
            Claim::Listen => "Listen",
        }
    }

    /// The claim a `$management` operation needs, as Service Bus decides: scheduling and
    /// cancelling a scheduled message are sends (Send); everything else the SDKs ask there —
    /// renewing locks, peeking, receiving deferred messages, settling, session locks and
    /// state, listing sessions, and a subscription's rules (which a Listen key manages) —
    /// needs Listen.
    pub fn of_management_operation(operation: &str) -> Claim {
        match operation {
            "com.microsoft:schedule-message" | "com.microsoft:cancel-scheduled-message" => {
                Claim::Send
            }
            _ => Claim::Listen,
        }
    }

    /// The claim named `name` (case-insensitively, as the service reads rights).
    pub fn parse(name: &str) -> Option<Claim> {
        [Claim::Manage, Claim::Send, Claim::Listen]
            .into_iter()
            .find(|claim| claim.name().eq_ignore_ascii_case(name))
    }
}

/// The rights one rule grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct AccessRights {
    manage: bool,
    send: bool,
    listen: bool,
}

impl AccessRights {
    /// Manage, Send and Listen: what the emulator's key grants.
    pub const ALL: AccessRights = AccessRights {
        manage: true,
        send: true,
        listen: true,
    };
    /// No right at all.
    pub const NONE: AccessRights = AccessRights {
        manage: false,
        send: false,
        listen: false,
    };

    /// The rights naming `claims`.
    pub fn of(claims: impl IntoIterator<Item = Claim>) -> AccessRights {
        claims
            .into_iter()
            .fold(AccessRights::NONE, |rights, claim| rights.with(claim))
    }

    fn with(mut self, claim: Claim) -> AccessRights {
        match claim {
            Claim::Manage => self.manage = true,
            Claim::Send => self.send = true,
            Claim::Listen => self.listen = true,
        }
        self
    }

    /// Whether these rights allow what `claim` needs (Manage implies Send and Listen).
    pub fn allow(self, claim: Claim) -> bool {
        self.manage
            || match claim {
                Claim::Manage => false,
                Claim::Send => self.send,
                Claim::Listen => self.listen,
            }
    }

    /// The rights of either.
    #[must_use]
    pub fn union(self, other: AccessRights) -> AccessRights {
        AccessRights {
            manage: self.manage || other.manage,
            send: self.send || other.send,
            listen: self.listen || other.listen,
        }
    }

    /// The claims granted, in the service's order (Manage, Send, Listen).
    pub fn claims(self) -> Vec<Claim> {
        [Claim::Manage, Claim::Send, Claim::Listen]
            .into_iter()
            .filter(|claim| match claim {
                Claim::Manage => self.manage,
                Claim::Send => self.send,
                Claim::Listen => self.listen,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manage_implies_send_and_listen_but_not_the_other_way() {
        let manage = AccessRights::of([Claim::Manage]);
        assert!(manage.allow(Claim::Send) && manage.allow(Claim::Listen));
        let both = AccessRights::of([Claim::Send, Claim::Listen]);
        assert!(!both.allow(Claim::Manage));
        let send = AccessRights::of([Claim::Send]);
        assert!(send.allow(Claim::Send) && !send.allow(Claim::Listen));
        assert_eq!(send.union(AccessRights::of([Claim::Listen])), both);
        assert_eq!(both.claims(), vec![Claim::Send, Claim::Listen]);
    }

    #[test]
    fn scheduling_needs_send_and_other_management_operations_listen() {
        for operation in [
            "com.microsoft:schedule-message",
            "com.microsoft:cancel-scheduled-message",
        ] {
            assert_eq!(Claim::of_management_operation(operation), Claim::Send);
        }
        for operation in [
            "com.microsoft:renew-lock",
            "com.microsoft:peek-message",
            "com.microsoft:update-disposition",
            "com.microsoft:add-rule",
            "com.microsoft:get-session-state",
            "",
        ] {
            assert_eq!(Claim::of_management_operation(operation), Claim::Listen);
        }
    }

    #[test]
    fn claims_parse_by_name_in_any_case() {
        assert_eq!(Claim::parse("listen"), Some(Claim::Listen));
        assert_eq!(Claim::parse("MANAGE"), Some(Claim::Manage));
        assert_eq!(Claim::parse("Read"), None);
    }
}
