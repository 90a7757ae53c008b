"""What the browser tests ask of the official Python SDK: send messages, dead-letter some, and
read a session's state, each as one command line: `python sdk_actions.py CONNECTION ACTION …`.
"""

import json
import sys

from azure.servicebus import ServiceBusClient, ServiceBusMessage


def main(connection, action, queue, *arguments):
    with ServiceBusClient.from_connection_string(connection) as client:
        if action == "send":
            count, session = int(arguments[0]), (arguments[1] if len(arguments) > 1 else None)
            messages = [
                ServiceBusMessage(
                    json.dumps({"order": number}),
                    content_type="application/json",
                    application_properties={"origin": "python"},
                    session_id=session,
                )
                for number in range(count)
            ]
            with client.get_queue_sender(queue) as sender:
                sender.send_messages(messages)
        elif action == "dead-letter":
            wanted = int(arguments[0])
            with client.get_queue_receiver(queue, max_wait_time=5) as receiver:
                done = 0
                while done < wanted:
                    for message in receiver.receive_messages(max_message_count=wanted - done):
                        receiver.dead_letter_message(
                            message, reason="bad-order", error_description="rejected by the test"
                        )
                        done += 1
        elif action == "state":
            with client.get_queue_receiver(queue, session_id=arguments[0]) as receiver:
                state = receiver.session.get_state()
                print("" if state is None else state.decode())
        else:
            raise SystemExit(f"unknown action {action}")


if __name__ == "__main__":
    main(*sys.argv[1:])
