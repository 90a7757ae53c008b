//! Entity status through the control interface: a change refuses the next send or receive at
//! once, ends the receive links already open (their messages stay), and survives a restart.

use busbar_amqp::engine::LinkId;
use busbar_core::{ReceiveMode, SubQueue};
use busbar_store::MemoryStorage;
use tokio::sync::mpsc;

use super::tests::{queue, start};
use super::*;
use crate::address::EntityPath;
use crate::config::EntityStatus;
use crate::runtime::mailbox::{ConnectionCommand, Mailbox, ReceiverKey};

fn path(name: &str) -> EntityPath {
    EntityPath::QueueOrTopic(EntityName::new(name))
}

async fn set_status(control: &Control, name: &str, status: EntityStatus) {
    let config = QueueConfig {
        status,
        ..queue(name)
    };
    control.update_queue(config, BTreeMap::new()).await.unwrap();
}

/// Registers a receive link with the queue's task, as a connection does on the link's flow.
fn open_receiver(control: &Control, name: &str) -> mpsc::Receiver<ConnectionCommand> {
    let state = control.state().unwrap();
    let handle = state.queue_handle(&EntityName::new(name)).unwrap();
    let (sender, commands) = mpsc::channel(4);
    post_entity(
        &handle.inbox,
        EntityCommand::Flow {
            receiver: ReceiverKey {
                connection: 1,
                link: LinkId::OUTSIDE_ENGINE,
            },
            sub_queue: SubQueue::Main,
            mode: ReceiveMode::PeekLock,
            limit: 0,
            drain: false,
            mailbox: Mailbox::new(sender),
        },
    );
    commands
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_applies_at_once_to_new_and_open_links_and_survives_a_restart() {
    let (control, stop, broker) = start(MemoryStorage::new()).await;
    control
        .create_queue(queue("paused"), BTreeMap::new())
        .await
        .unwrap();
    let mut open = open_receiver(&control, "paused");
    let registry = || control.state().unwrap().registry.current();

    set_status(&control, "paused", EntityStatus::ReceiveDisabled).await;
    let disabled = BrokerError::EntityDisabled {
        namespace: "sbemulatorns".into(),
        entity: "paused".into(),
    };
    match open.recv().await {
        Some(ConnectionCommand::ReceiverEnded { link, error }) => {
            assert_eq!(link, LinkId::OUTSIDE_ENGINE);
            assert_eq!(error, disabled);
        }
        _ => panic!("the open receive link was not ended"),
    }
    // A link that attached meanwhile is ended on its flow.
    let mut late = open_receiver(&control, "paused");
    assert!(matches!(
        late.recv().await,
        Some(ConnectionCommand::ReceiverEnded { .. })
    ));
    let namespace = "sbemulatorns";
    assert_eq!(
        registry().receive_refusal(namespace, &path("paused")),
        Some(disabled)
    );
    assert_eq!(registry().send_refusal(namespace, &path("paused")), None);

    set_status(&control, "paused", EntityStatus::SendDisabled).await;
    let send_disabled = Some(BrokerError::EntitySendDisabled {
        namespace: namespace.into(),
        kind: "Queue",
        entity: "paused".into(),
    });
    assert_eq!(
        registry().send_refusal(namespace, &path("paused")),
        send_disabled
    );
    assert_eq!(registry().receive_refusal(namespace, &path("paused")), None);
    drop(stop);
    let storage = broker.await.unwrap().restart();

    let (control, stop, broker) = start(storage).await;
    let restored = control.queue("paused").await.unwrap();
    assert_eq!(restored.config.status, EntityStatus::SendDisabled);
    // Read and let go: the registry holds the entities' inboxes, which a shutdown waits for.
    let refusal = control
        .state()
        .unwrap()
        .registry
        .current()
        .send_refusal(namespace, &path("paused"));
    assert_eq!(refusal, send_disabled);
    drop(stop);
    broker.await.unwrap();
}
