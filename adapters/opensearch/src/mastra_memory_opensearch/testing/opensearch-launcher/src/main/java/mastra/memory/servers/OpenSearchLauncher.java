package mastra.memory.servers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.ExtensiblePlugin;
import org.opensearch.plugins.Plugin;

/**
 * Starts a single-node OpenSearch in this JVM, with the plugins a vector workload needs, and keeps it
 * running until the process is terminated (SIGTERM/SIGINT close the node cleanly).
 *
 * <p>Usage: {@code OpenSearchLauncher HOME HTTP_PORT TRANSPORT_PORT [key=value ...]}. HOME is an empty
 * directory that receives the node's data and logs; extra {@code key=value} arguments are node settings.
 *
 * <p>The plugins are loaded as <em>classpath plugins</em> (the way OpenSearch's own test framework starts
 * nodes) instead of from a {@code plugins/} folder, so no distribution layout, security manager or plugin
 * descriptors are needed. They are named here, not imported: the k-NN jar comes from the plugin zip
 * and is only on the runtime classpath.
 */
public final class OpenSearchLauncher {

    /**
     * The HTTP/transport layer, painless (k-NN extends it), reindex (delete and update by query), and k-NN
     * itself.
     */
    private static final String[] PLUGINS = {
        "org.opensearch.transport.Netty4Plugin",
        "org.opensearch.painless.PainlessPlugin",
        "org.opensearch.index.reindex.ReindexPlugin",
        "org.opensearch.knn.plugin.KNNPlugin",
    };

    /** Node's constructor that takes classpath plugins is protected; this subclass exposes it. */
    private static final class PluginNode extends Node {
        PluginNode(Environment environment, List<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    private OpenSearchLauncher() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: OpenSearchLauncher HOME HTTP_PORT TRANSPORT_PORT [key=value ...]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        Files.createDirectories(home.resolve("config"));

        Settings.Builder settings = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("cluster.name", "mastra-memory-conformance")
            .put("node.name", "conformance")
            // One node, no discovery, bound to loopback only (bootstrap checks stay off on loopback).
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", args[1])
            .put("transport.port", args[2])
            // A test node must not refuse writes because the shared disk is fuller than a production
            // watermark would allow.
            .put("cluster.routing.allocation.disk.threshold_enabled", false);
        for (int i = 3; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("setting " + args[i] + " is not key=value");
                System.exit(2);
            }
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }

        // A plugin folder would give k-NN's painless extension (its scoring functions, such as
        // cosineSimilarity) to painless; classpath plugins are not wired to the plugins they extend. Painless
        // keeps its allowlists in a static map, so loading the extensions once here serves the node's instance.
        new PainlessPlugin().loadExtensions(new ExtensiblePlugin.ExtensionLoader() {
            @Override
            public <T> List<T> loadExtensions(Class<T> type) {
                List<T> found = new ArrayList<>();
                ServiceLoader.load(type, OpenSearchLauncher.class.getClassLoader()).forEach(found::add);
                return found;
            }
        });

        List<Class<? extends Plugin>> plugins = new ArrayList<>();
        for (String name : PLUGINS) {
            plugins.add(Class.forName(name).asSubclass(Plugin.class));
        }

        Environment environment = InternalSettingsPreparer.prepareEnvironment(
            settings.build(), Collections.emptyMap(), home.resolve("config"), () -> "conformance");
        Node node = new PluginNode(environment, plugins);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                stopped.countDown();
            }
        }, "opensearch-launcher-shutdown"));

        node.start();
        System.out.println("OpenSearchLauncher: node started, HTTP on 127.0.0.1:" + args[1]);
        stopped.await();
    }
}
