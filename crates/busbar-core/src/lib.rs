//! Sans-IO state machine of one Service Bus entity (a queue or a subscription).
