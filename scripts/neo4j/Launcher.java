import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Runs Neo4j Community embedded with only the Bolt connector on 127.0.0.1, auth disabled and a small page
 * cache, for tests and local development. Started by scripts/neo4j/server.ts as a single source file:
 *
 *   java -cp "$(cat .cache/neo4j/classpath.txt)" scripts/neo4j/Launcher.java PORT DATA_DIR [--exit-on-eof]
 *
 * Prints "NEO4J READY bolt://127.0.0.1:PORT" once the default database accepts queries. With --exit-on-eof
 * it shuts down when standard input closes, so a crashed parent never leaves a server behind.
 */
public final class Launcher {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Launcher PORT DATA_DIR [--exit-on-eof]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        Path home = Path.of(args[1]).toAbsolutePath();
        boolean exitOnEof = args.length > 2 && args[2].equals("--exit-on-eof");

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
            .setConfig(BoltConnector.enabled, true)
            .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
            .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
            .setConfig(HttpConnector.enabled, false)
            .setConfig(GraphDatabaseSettings.auth_enabled, false)
            .setConfig(GraphDatabaseSettings.pagecache_memory, 64L * 1024 * 1024)
            .setConfig(GraphDatabaseSettings.keep_logical_logs, "false")
            .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
            .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofSeconds(60))
            // Stop in about a second rather than the default grace periods (10-15 s): tests stop and restart it.
            .setConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofSeconds(1))
            .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
            .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1))
            .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
            .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
            // No usage reports: the machine may have no network but the loopback.
            .setConfig(GraphDatabaseInternalSettings.udc_network_enabled, false)
            .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-shutdown"));

        // A trivial query proves the default database is online before anyone is told so.
        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        System.out.println("NEO4J READY bolt://127.0.0.1:" + port);
        System.out.flush();

        if (exitOnEof) {
            Thread watcher = new Thread(() -> {
                try {
                    InputStream in = System.in;
                    while (in.read() != -1) {
                        // Input is ignored; only its end matters.
                    }
                } catch (Exception ignored) {
                    // A broken pipe means the parent is gone, as EOF does.
                }
                System.exit(0);
            }, "stdin-watcher");
            watcher.setDaemon(true);
            watcher.start();
        }
        stopped.await();
    }
}
