package ranktrainer.engines;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.client.node.NodeClient;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.rest.RestChannel;
import org.opensearch.rest.RestHandler;
import org.opensearch.rest.RestRequest;
import org.opensearch.transport.Netty4Plugin;

/**
 * A real single-node OpenSearch (the server jar from Maven Central, its netty4 HTTP transport and its
 * analysis-common module, the k-NN plugin when its jars are on the classpath; no security plugin) for the
 * tests: {@code OpenSearchNode PORT DATA_DIR}.
 * Prints {@code READY http://127.0.0.1:PORT} once the node answers, runs until killed (or,
 * with {@code -Dranktrainer.exitWithStdin=true}, until its standard input closes: see {@link EngineMain}).
 *
 * <p>Each REST request's method, path and Authorization header is appended, as the node received it,
 * to {@code DATA_DIR/requests.log} (the {@link RequestLog} plugin): with security off that is how the
 * tests see that the header reaches the engine.
 */
public final class OpenSearchNode {
    private OpenSearchNode() {}

    /** Records what each REST request carried, then hands it on unchanged. */
    public static final class RequestLog extends Plugin implements ActionPlugin {
        static volatile Path file;

        @Override
        public UnaryOperator<RestHandler> getRestHandlerWrapper(ThreadContext threadContext) {
            return Logged::new;
        }
    }

    /** A REST handler that logs the request, then behaves exactly as the one it wraps. */
    private static final class Logged implements RestHandler {
        private final RestHandler handler;

        Logged(RestHandler handler) {
            this.handler = handler;
        }

        @Override
        public void handleRequest(RestRequest request, RestChannel channel, NodeClient client) throws Exception {
            String auth = request.header("Authorization");
            String line = request.method() + " " + request.uri() + " authorization=" + (auth == null ? "-" : auth) + "\n";
            synchronized (RequestLog.class) {
                Files.writeString(RequestLog.file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
            handler.handleRequest(request, channel, client);
        }

        @Override
        public boolean canTripCircuitBreaker() {
            return handler.canTripCircuitBreaker();
        }

        @Override
        public boolean supportsContentStream() {
            return handler.supportsContentStream();
        }

        @Override
        public boolean allowsUnsafeBuffers() {
            return handler.allowsUnsafeBuffers();
        }
    }

    /**
     * The k-NN plugin (org.opensearch.plugin:opensearch-knn 2.19.1.0, unpacked from its zip on Maven Central by
     * the pom), loaded by name as a classpath plugin, as the server's own modules are: a classpath plugin is
     * not checked against the node's version (the plugin says 2.19.1, the node is 2.19.6). Without its native
     * libraries only the Lucene engine and the knn_score script run, which is all the export uses.
     */
    static final String KNN_PLUGIN = "org.opensearch.knn.plugin.KNNPlugin";

    static List<Class<? extends Plugin>> plugins() {
        List<Class<? extends Plugin>> plugins = new ArrayList<>(List.of(Netty4Plugin.class, CommonAnalysisPlugin.class, RequestLog.class));
        try {
            plugins.add(Class.forName(KNN_PLUGIN).asSubclass(Plugin.class));
        } catch (ClassNotFoundException e) {
            System.err.println("k-NN plugin not loaded: " + KNN_PLUGIN + " is not on the classpath (engines/opensearch/target/plugins)");
        }
        return plugins;
    }

    /** A node with plugins given as classes on the classpath (as the server's own modules are, once installed). */
    private static final class TestNode extends Node {
        TestNode(Settings settings, Collection<Class<? extends Plugin>> plugins) {
            super(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "node-1"), plugins, true);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: OpenSearchNode PORT DATA_DIR");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        Path home = Path.of(args[1]).toAbsolutePath();
        Files.createDirectories(home.resolve("config"));
        RequestLog.file = home.resolve("requests.log");
        Settings settings = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("cluster.name", "rank-trainer-tests")
            .put("node.name", "node-1")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", port)
            .put("transport.port", 0)
            .put("http.type", "netty4")
            .put("transport.type", "netty4")
            // A test node on a shared disk: never go read-only because the disk is fuller than usual.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", false)
            .build();
        LogConfigurator.registerErrorListener();
        LogConfigurator.configureWithoutConfig(settings);
        Node node = new TestNode(settings, plugins());
        node.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (IOException e) {
                // exiting anyway
            }
        }));
        System.out.println("READY http://127.0.0.1:" + port);
        System.out.flush();
        EngineMain.waitUntilKilled();
    }
}
