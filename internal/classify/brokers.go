package classify

import "strings"

// Message brokers: the Kafka command-line tools, RabbitMQ, NATS, Pulsar,
// Redpanda, MQTT. Listing and describing read; deleting topics, queues,
// streams, consumer groups and records, and purging queues, destroy
// messages; creating and altering them changes the broker's
// configuration; producing and consuming messages talk to it (network).
// SQS and SNS are reached through the aws CLI (see cloud.go).

// brokerPrograms registers the message brokers' tools.
func brokerPrograms(r *registry) {
	var kafka []string
	for _, tool := range []string{
		"kafka-topics", "kafka-consumer-groups", "kafka-configs", "kafka-acls", "kafka-delete-records",
		"kafka-console-consumer", "kafka-console-producer", "kafka-streams-application-reset", "kafka-storage",
		"kafka-reassign-partitions", "kafka-leader-election", "kafka-preferred-replica-election", "kafka-log-dirs",
		"kafka-get-offsets", "kafka-run-class", "kafka-server-start", "kafka-server-stop", "kafka-broker-api-versions",
		"kafka-metadata-quorum", "kafka-features", "kafka-dump-log", "kafka-mirror-maker", "kafka-producer-perf-test",
		"kafka-consumer-perf-test", "kafka-verifiable-producer", "kafka-verifiable-consumer", "kafka-transactions",
		"kafka-cluster", "kafka-metadata-shell", "kafka-replica-verification", "zookeeper-server-start",
		"zookeeper-server-stop", "kafka-client-metrics", "kafka-e2e-latency", "kafka-jmx",
	} {
		kafka = append(kafka, tool, tool+".sh")
	}
	r.handle(kafkaCmd, kafka...)
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{"rmr": Destructive, "deleteall": Destructive, "stat": ReadOnly, "getacl": ReadOnly, "setacl": Privilege}),
		"zookeeper-shell", "zookeeper-shell.sh", "zkcli", "zkcli.sh")
	r.handle(kcatCmd, "kcat", "kafkacat")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"cluster_status": ReadOnly, "await_startup": ReadOnly, "node_health_check": ReadOnly, "environment": ReadOnly,
		"export_definitions": WorkspaceWrite, "join_cluster": ConfigMutation, "clear_policy": ConfigMutation,
		"clear_parameter": ConfigMutation, "clear_operator_policy": ConfigMutation,
		"add_user": Privilege, "change_password": Privilege, "set_permissions": Privilege, "clear_permissions": Privilege,
		"set_user_tags": Privilege, "set_topic_permissions": Privilege, "clear_topic_permissions": Privilege,
		"clear_password": Privilege, "authenticate_user": ReadOnly, "hipe_compile": WorkspaceWrite,
	}), "rabbitmqctl")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{"get": Network, "publish": Network}), "rabbitmqadmin")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{"enable": PackageInstall, "disable": PackageInstall, "set": PackageInstall}), "rabbitmq-plugins")
	r.handle(subcommandCLI(ReadOnly, "runs a diagnostic, which only reads", verbTable{"remote_shell": Unknown}), "rabbitmq-diagnostics")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{"grow": ConfigMutation, "shrink": ConfigMutation, "rebalance": ConfigMutation, "quorum_status": ReadOnly, "drain": ConfigMutation, "revive": ConfigMutation}),
		"rabbitmq-queues", "rabbitmq-streams", "rabbitmq-upgrade")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{
		"sub": ReadOnly, "req": Network, "request": Network, "reply": Network, "bench": Network, "rmm": Destructive,
		"seal": ConfigMutation, "backup": WorkspaceWrite, "subjects": ReadOnly, "latency": ReadOnly, "rtt": ReadOnly,
	}), "nats")
	r.handle(subcommandCLI(Unknown, "runs a command logbook does not know", verbTable{"produce": Network, "consume": Network}), "pulsar-admin", "pulsarctl", "pulsar-client", "rpk")
	r.fixed(Network, map[string]string{"mosquitto_pub": "publishes MQTT messages"})
	r.fixed(ReadOnly, map[string]string{"mosquitto_sub": "subscribes to MQTT messages and prints them"})
}

// kafkaCmd judges the Kafka tools by their name and their action option
// (--delete, --create, --alter, --list...). A reset of consumer offsets,
// a reassignment or a records deletion only happens with --execute where
// the tool asks for it.
func kafkaCmd(_ *state, c command) judgement {
	tool := strings.TrimSuffix(c.name, ".sh")
	o := scanOptions(c.args, scanSpec{valued: "--bootstrap-server --zookeeper --topic --group --command-config --partitions --replication-factor --config --entity-type --entity-name --add-config --delete-config --offset-json-file --reassignment-json-file --property --producer.config --consumer.config --max-messages --operation --allow-principal --deny-principal --resource-pattern-type --cluster-id --application-id --input-topics --intermediate-topics --to-datetime --to-offset --shift-by --by-duration -t --topics-to-move-json-file --broker-list --partition --offset --timeout-ms"})
	execute := o.has("--execute")
	switch tool {
	case "kafka-delete-records":
		return is(Destructive, c.name+" deletes records from topics")
	case "kafka-streams-application-reset":
		if o.has("--dry-run") {
			return is(ReadOnly, c.name+" --dry-run only says what it would reset")
		}
		return is(Destructive, c.name+" resets a streams application, deleting its internal topics")
	case "kafka-storage":
		if verb, _ := subcommand(c.args, ""); verb == "format" {
			return is(Destructive, c.name+" format formats a broker's log directories")
		}
		return is(ReadOnly, c.name+" only reads")
	case "kafka-console-consumer", "kafka-consumer-perf-test", "kafka-verifiable-consumer":
		return is(Network, c.name+" reads messages from the cluster, committing the group's offsets")
	case "kafka-console-producer", "kafka-producer-perf-test", "kafka-verifiable-producer":
		return is(Network, c.name+" sends messages to the cluster")
	case "kafka-server-start", "kafka-server-stop", "zookeeper-server-start", "zookeeper-server-stop", "kafka-mirror-maker":
		return is(ServiceControl, c.name+" starts or stops a server")
	case "kafka-run-class":
		return is(Unknown, c.name+" runs a Java class logbook cannot read")
	case "kafka-reassign-partitions", "kafka-leader-election", "kafka-preferred-replica-election":
		if execute || tool != "kafka-reassign-partitions" && !o.has("--help") {
			return is(ConfigMutation, c.name+" moves partitions or their leaders")
		}
		return is(ReadOnly, c.name+" without --execute only proposes or verifies")
	}
	switch {
	case o.hasPrefix("--delete") && tool != "kafka-configs", o.has("--remove"):
		return is(Destructive, c.name+" "+firstOf(o, "--delete", "--delete-offsets", "--remove")+" deletes from the cluster")
	case o.has("--reset-offsets"):
		if execute {
			return is(ConfigMutation, c.name+" --reset-offsets --execute moves the group's offsets")
		}
		return is(ReadOnly, c.name+" --reset-offsets without --execute only shows the new offsets")
	case o.has("--add") && tool == "kafka-acls":
		return is(Privilege, c.name+" --add grants permissions")
	case o.has("--create", "--alter", "--add", "--upgrade", "--downgrade", "--abort", "--force-terminate", "--unregister", "--add-config", "--delete-config"):
		return is(ConfigMutation, c.name+" changes the cluster's configuration")
	}
	return is(ReadOnly, c.name+" lists or describes")
}

// kcatCmd: kcat -P produces, -C consumes, -L lists metadata.
func kcatCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-b -t -p -o -c -G -X -f -K -k -D -e -F -s"})
	switch {
	case o.has("-P"):
		return is(Network, c.name+" -P sends messages")
	case o.has("-L", "-Q", "-V", "-h"):
		return is(ReadOnly, c.name+" lists metadata")
	}
	return is(Network, c.name+" reads messages from the cluster")
}
