// A local Neo4j Community server for development and tests: the embedded DBMS from
// Maven Central with its Bolt connector, on 127.0.0.1 only, auth on.
//
//   java -Xmx512m -cp 'lib/*' Launcher.java --home DIR [--port N] [--conf key=value ...]
//        [--pid-file FILE] [--watch-pid PID]
//
// The password comes from the environment (NEO4J_PASSWORD, at least 8 characters), not
// from the command line, so that it does not show in `ps`. It is set on the user
// `neo4j` through the system database. --port 0 (the default) takes a free port.
// Once Bolt accepts logins the launcher prints one line, `READY bolt://127.0.0.1:PORT`,
// and runs until SIGTERM/SIGINT, when the shutdown hook stops the DBMS cleanly; with
// --watch-pid also when that process is gone (a test run that was killed).
// scripts/neo4j.sh runs it; nothing else is needed.

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.kernel.internal.Version;

public class Launcher {
    static final String HOST = "127.0.0.1";
    static final int MIN_PASSWORD = 8;

    public static void main(String[] args) throws Exception {
        Path home = null;
        int port = 0;
        List<String> conf = new ArrayList<>();
        Path pidFile = null;
        long watchPid = -1;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--home" -> { home = Path.of(need(a, v)); i++; }
                case "--port" -> { port = Integer.parseInt(need(a, v)); i++; }
                case "--conf" -> { conf.add(need(a, v)); i++; }
                case "--pid-file" -> { pidFile = Path.of(need(a, v)); i++; }
                case "--watch-pid" -> { watchPid = Long.parseLong(need(a, v)); i++; }
                default -> fail("unknown argument " + a);
            }
        }
        if (home == null) {
            fail("--home DIR is required");
        }
        String password = System.getenv("NEO4J_PASSWORD");
        if (password == null || password.length() < MIN_PASSWORD) {
            fail("NEO4J_PASSWORD must be set, at least " + MIN_PASSWORD + " characters");
        }
        if (port == 0) {
            port = freePort();
        }
        Files.createDirectories(home);
        if (pidFile != null) {
            Files.writeString(pidFile, ProcessHandle.current().pid() + "\n");
        }

        // Small on purpose: a laptop or CI runner, next to the JVM's own -Xmx. Lines from
        // --conf come later and win.
        List<String> lines = new ArrayList<>(List.of(
                "dbms.security.auth_enabled=true",
                "server.memory.pagecache.size=64m",
                // like docker-compose.yml's server (1 GB heap): a bounded transaction budget
                "dbms.memory.transaction.total.max=256m",
                "db.tx_log.rotation.retention_policy=2 files",
                "dbms.usage_report.enabled=false",
                "server.directories.logs=" + home.resolve("logs")));
        lines.addAll(conf);
        Path confFile = home.resolve("neo4j.conf");
        Files.write(confFile, lines, StandardCharsets.UTF_8);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(confFile)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(HOST, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(HOST, port))
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("STOPPING");
            dbms.shutdown();
            System.out.println("STOPPED");
            stopped.countDown();
        }, "neo4j-shutdown"));

        setPassword(dbms.database("system"), password);
        dbms.database("neo4j").executeTransactionally("RETURN 1");
        System.out.println("NEO4J_VERSION " + Version.getNeo4jVersion());
        System.out.println("READY bolt://" + HOST + ":" + port);
        System.out.flush();
        if (watchPid > 0) {
            watch(watchPid);
        }
        stopped.await();
    }

    static void watch(long pid) {
        Thread t = new Thread(() -> {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
            }
            System.out.println("WATCHED PROCESS " + pid + " GONE");
            System.exit(0); // runs the shutdown hook
        }, "watch-pid");
        t.setDaemon(true);
        t.start();
    }

    static void setPassword(GraphDatabaseService system, String password) {
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // a restart over existing data with the same password: nothing to change
            String msg = String.valueOf(e.getMessage()) + " " + String.valueOf(e.getCause());
            if (!msg.contains("cannot be the same")) {
                throw e;
            }
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(HOST, 0));
            return s.getLocalPort();
        }
    }

    static String need(String flag, String value) {
        if (value == null) {
            fail(flag + " needs a value");
        }
        return value;
    }

    static void fail(String message) {
        System.err.println("Launcher: " + message);
        System.exit(2);
    }
}
