package ranktrainer.engines;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import org.apache.solr.client.solrj.embedded.JettyConfig;
import org.apache.solr.client.solrj.embedded.JettySolrRunner;

/**
 * A real Solr 8.11 node with Solr's Learning to Rank module on its classpath (solr-core in Jetty,
 * standalone mode), as engines/solr's SolrNode with Solr 8's package of the embedded Jetty:
 * {@code SolrLtrNode PORT SOLR_HOME CONFIGSETS_DIR}. Cores are made with the CoreAdmin API from the
 * configsets in CONFIGSETS_DIR ({@code /solr/admin/cores?action=CREATE&name=cranfield&configSet=answers}).
 * Prints {@code READY http://127.0.0.1:PORT/solr} once Solr answers, runs until killed (or, with
 * {@code -Dranktrainer.exitWithStdin=true}, until its standard input closes: see {@link EngineMain}).
 */
public final class SolrLtrNode {
    private SolrLtrNode() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: SolrLtrNode PORT SOLR_HOME CONFIGSETS_DIR");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        Path home = Path.of(args[1]).toAbsolutePath();
        Path configsets = Path.of(args[2]).toAbsolutePath();
        Files.createDirectories(home);
        Path solrXml = home.resolve("solr.xml");
        if (!Files.exists(solrXml)) {
            Files.writeString(solrXml, "<solr>\n  <str name=\"configSetBaseDir\">" + configsets + "</str>\n"
                + "  <str name=\"allowPaths\">" + configsets + "</str>\n</solr>\n");
        }
        System.setProperty("solr.log.dir", home.resolve("logs").toString());
        System.setProperty("solr.disable.shardsWhitelist", "true");
        JettyConfig config = JettyConfig.builder().setPort(port).setContext("/solr").stopAtShutdown(true).build();
        JettySolrRunner solr = new JettySolrRunner(home.toString(), new Properties(), config);
        solr.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                solr.stop();
            } catch (Exception e) {
                // exiting anyway
            }
        }));
        System.out.println("READY " + solr.getBaseUrl().toString().replace("localhost", "127.0.0.1"));
        System.out.flush();
        EngineMain.waitUntilKilled();
    }
}
