//! The Azure Service Bus dialect over AMQP 1.0.
