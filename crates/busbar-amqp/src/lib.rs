//! AMQP 1.0: codec, sans-IO protocol engines and a thin tokio driver.
