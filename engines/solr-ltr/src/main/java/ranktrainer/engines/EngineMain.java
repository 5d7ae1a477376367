package ranktrainer.engines;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;

/** What the launchers share: keeping the node up. */
final class EngineMain {
    private EngineMain() {}

    /**
     * Blocks until the process is killed. With {@code -Dranktrainer.exitWithStdin=true} the process also
     * exits (shutdown hooks run) when its standard input closes, so a test run that dies without killing
     * its engines (its end of the pipe closes with it) leaves no node behind.
     */
    static void waitUntilKilled() throws InterruptedException {
        if (Boolean.getBoolean("ranktrainer.exitWithStdin")) {
            Thread watcher = new Thread(() -> {
                try {
                    while (System.in.read() != -1) {
                        // nothing is sent; only the end matters
                    }
                } catch (IOException e) {
                    // closed
                }
                System.exit(0);
            }, "stdin-watcher");
            watcher.setDaemon(true);
            watcher.start();
        }
        new CountDownLatch(1).await();
    }
}
