//! Checks across entities: unique names (case-insensitive), forwarding targets that exist, and
//! no forwarding loops or chains of more than four hops.

use std::collections::HashMap;

use super::model::{DeliverySettings, NamespaceConfig};
use super::reader::Invalid;
use crate::names::EntityName;

/// Service Bus forwards a message over at most this many `ForwardTo` hops.
const MAX_FORWARDING_HOPS: u32 = 4;

/// Runs every cross-entity check on a resolved namespace.
pub(super) fn check(namespace: &NamespaceConfig) -> Result<(), Invalid> {
    unique_names(namespace)?;
    let graph = ForwardingGraph::build(namespace)?;
    graph.check()
}

fn unique_names(namespace: &NamespaceConfig) -> Result<(), Invalid> {
    let queues = namespace.queues.iter().map(|queue| (&queue.name, "queue"));
    let topics = namespace.topics.iter().map(|topic| (&topic.name, "topic"));
    unique(queues.chain(topics), String::new())?;
    for topic in &namespace.topics {
        let scope = format!("topic \"{}\" ", topic.name);
        unique(
            topic
                .subscriptions
                .iter()
                .map(|subscription| (&subscription.name, "subscription")),
            scope.clone(),
        )?;
        for subscription in &topic.subscriptions {
            let scope = format!("{scope}subscription \"{}\" ", subscription.name);
            unique(
                subscription.rules.iter().map(|rule| (&rule.name, "rule")),
                scope,
            )?;
        }
    }
    Ok(())
}

/// Refuses the second of two names that differ only in case; `prefix` is the parent's scope.
fn unique<'a>(
    names: impl Iterator<Item = (&'a EntityName, &'static str)>,
    prefix: String,
) -> Result<(), Invalid> {
    let mut seen: HashMap<&EntityName, (&EntityName, &str)> = HashMap::new();
    for (name, kind) in names {
        if let Some((first, first_kind)) = seen.insert(name, (name, kind)) {
            return Err(Invalid {
                scope: format!("{prefix}{kind} \"{name}\""),
                message: format!(
                    "the name is already used by {first_kind} \"{first}\" (names are case-insensitive)"
                ),
            });
        }
    }
    Ok(())
}

/// Where messages can flow without a client: a topic to each of its subscriptions (free), and a
/// queue or subscription to its forwarding targets (one hop each).
struct ForwardingGraph {
    nodes: Vec<Node>,
}

struct Node {
    /// The entity path, e.g. `orders` or `t/Subscriptions/s`.
    label: String,
    /// The error scope, e.g. `queue "orders"`.
    scope: String,
    edges: Vec<Edge>,
}

struct Edge {
    to: usize,
    /// The forwarding property behind a hop; `None` for topic-to-subscription fan-out.
    via: Option<&'static str>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    OnPath,
    Done,
}

impl ForwardingGraph {
    fn build(namespace: &NamespaceConfig) -> Result<Self, Invalid> {
        let mut nodes = Vec::new();
        let mut by_name: HashMap<&EntityName, usize> = HashMap::new();
        for queue in &namespace.queues {
            by_name.insert(&queue.name, nodes.len());
            nodes.push(Node {
                label: queue.name.to_string(),
                scope: format!("queue \"{}\"", queue.name),
                edges: vec![],
            });
        }
        let mut topic_nodes = Vec::with_capacity(namespace.topics.len());
        for topic in &namespace.topics {
            by_name.insert(&topic.name, nodes.len());
            topic_nodes.push(nodes.len());
            nodes.push(Node {
                label: topic.name.to_string(),
                scope: format!("topic \"{}\"", topic.name),
                edges: vec![],
            });
        }
        let mut forwarders: Vec<(usize, &DeliverySettings)> = namespace
            .queues
            .iter()
            .enumerate()
            .map(|(index, queue)| (index, &queue.delivery))
            .collect();
        for (topic, topic_index) in namespace.topics.iter().zip(topic_nodes) {
            for subscription in &topic.subscriptions {
                let index = nodes.len();
                nodes.push(Node {
                    label: format!("{}/Subscriptions/{}", topic.name, subscription.name),
                    scope: format!(
                        "topic \"{}\" subscription \"{}\"",
                        topic.name, subscription.name
                    ),
                    edges: vec![],
                });
                if let Some(topic_node) = nodes.get_mut(topic_index) {
                    topic_node.edges.push(Edge {
                        to: index,
                        via: None,
                    });
                }
                forwarders.push((index, &subscription.delivery));
            }
        }
        for (index, delivery) in forwarders {
            let targets = [
                ("ForwardTo", &delivery.forward_to),
                (
                    "ForwardDeadLetteredMessagesTo",
                    &delivery.forward_dead_lettered_messages_to,
                ),
            ];
            for (field, target) in targets {
                let Some(target) = target else { continue };
                let Some(node) = nodes.get_mut(index) else {
                    continue;
                };
                let to = by_name.get(target).copied().ok_or_else(|| Invalid {
                    scope: node.scope.clone(),
                    message: format!(
                        "{field} \"{target}\" names no queue or topic of this namespace"
                    ),
                })?;
                node.edges.push(Edge {
                    to,
                    via: Some(field),
                });
            }
        }
        Ok(Self { nodes })
    }

    /// A depth-first walk (iterative, so a long chain in a file cannot exhaust the stack) finds
    /// loops on the way down and the longest chain from each entity on the way back up.
    fn check(&self) -> Result<(), Invalid> {
        let count = self.nodes.len();
        let mut visit = vec![Visit::New; count];
        let mut longest = vec![0u32; count];
        let mut next_on_longest: Vec<Option<usize>> = vec![None; count];
        for start in 0..count {
            if visit.get(start) != Some(&Visit::New) {
                continue;
            }
            visit[start] = Visit::OnPath;
            // Each frame: a node and how many of its edges were taken.
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            while let Some(top) = stack.last_mut() {
                let (node, taken) = *top;
                if let Some(edge) = self.nodes[node].edges.get(taken) {
                    top.1 += 1;
                    match visit[edge.to] {
                        Visit::OnPath => return Err(self.loop_error(&stack, edge.to)),
                        Visit::New => {
                            visit[edge.to] = Visit::OnPath;
                            stack.push((edge.to, 0));
                        }
                        Visit::Done => {}
                    }
                } else {
                    stack.pop();
                    visit[node] = Visit::Done;
                    let best = self.nodes[node]
                        .edges
                        .iter()
                        .map(|edge| longest[edge.to].saturating_add(u32::from(edge.via.is_some())))
                        .enumerate()
                        .max_by_key(|(_, hops)| *hops);
                    if let Some((edge_index, hops)) = best {
                        longest[node] = hops;
                        next_on_longest[node] = Some(edge_index);
                    }
                }
            }
        }
        match (0..count).find(|node| longest[*node] > MAX_FORWARDING_HOPS) {
            Some(start) => Err(self.chain_error(start, longest[start], &next_on_longest)),
            None => Ok(()),
        }
    }

    fn loop_error(&self, stack: &[(usize, usize)], back_to: usize) -> Invalid {
        let from = stack
            .iter()
            .position(|(node, _)| *node == back_to)
            .unwrap_or_default();
        // Each frame's last taken edge is the one leading to the next frame.
        let path: Vec<(usize, &Edge)> = stack
            .get(from..)
            .unwrap_or_default()
            .iter()
            .filter_map(|(node, taken)| {
                Some((*node, self.nodes[*node].edges.get(taken.checked_sub(1)?)?))
            })
            .collect();
        // Start the loop at its first forwarding hop, which is what the error blames.
        let blame = path
            .iter()
            .position(|(_, edge)| edge.via.is_some())
            .unwrap_or_default();
        let (tail, head) = path.split_at(blame);
        let rotated: Vec<&(usize, &Edge)> = head.iter().chain(tail).collect();
        let mut labels: Vec<&str> = rotated
            .iter()
            .map(|(node, _)| self.nodes[*node].label.as_str())
            .collect();
        labels.extend(labels.first().copied());
        self.blame(
            rotated.first().map(|pair| **pair),
            format!("makes a forwarding loop: {}", labels.join(" -> ")),
        )
    }

    fn chain_error(&self, start: usize, hops: u32, next_on_longest: &[Option<usize>]) -> Invalid {
        let mut path: Vec<(usize, &Edge)> = Vec::new();
        let mut labels = vec![self.nodes[start].label.as_str()];
        let mut node = start;
        while let Some(edge) =
            next_on_longest[node].and_then(|index| self.nodes[node].edges.get(index))
        {
            path.push((node, edge));
            labels.push(self.nodes[edge.to].label.as_str());
            node = edge.to;
        }
        let first_hop = path.iter().find(|(_, edge)| edge.via.is_some()).copied();
        let message = format!(
            "starts a forwarding chain of {hops} hops, more than the {MAX_FORWARDING_HOPS} Service Bus allows: {}",
            labels.join(" -> ")
        );
        self.blame(first_hop, message)
    }

    /// An error in the scope of the entity whose forwarding property `hop` is.
    fn blame(&self, hop: Option<(usize, &Edge)>, what: String) -> Invalid {
        match hop {
            Some((node, edge)) => Invalid {
                scope: self.nodes[node].scope.clone(),
                message: format!(
                    "{} \"{}\" {what}",
                    edge.via.unwrap_or("ForwardTo"),
                    self.nodes[edge.to].label
                ),
            },
            None => Invalid {
                scope: "namespace".to_owned(),
                message: format!("forwarding {what}"),
            },
        }
    }
}
