//! Configuration: the Service Bus emulator's `Config.json`, read as-is and validated.
