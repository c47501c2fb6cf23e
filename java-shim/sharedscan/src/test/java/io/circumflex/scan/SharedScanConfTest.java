package io.circumflex.scan;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/** A member's configuration file holds its own settings only and reads back over the defaults. */
public class SharedScanConfTest {
  @Test
  public void memberConfigurationKeepsOwnSettingsAndDefaults() throws Exception {
    Configuration conf = new Configuration();
    conf.set(ScanKeys.MEMBER, "m-0000000007");
    conf.set("mapreduce.job.map.class", "my.Mapper");
    conf.set("io.file.buffer.size", "8192");
    Configuration own = SharedScan.ownSettings(conf);
    assertEquals("my.Mapper", own.get("mapreduce.job.map.class"));
    assertEquals("8192", own.get("io.file.buffer.size"));
    assertNull("a default left as it is is not written", own.get("hadoop.security.authentication"));
    assertTrue("far smaller than the whole configuration: " + own.size() + " of " + conf.size(), own.size() < conf.size() / 4);

    File f = File.createTempFile("member", ".xml");
    try (FileOutputStream out = new FileOutputStream(f)) {
      own.writeXml(out);
    }
    Configuration back = SharedScan.loadMemberConf(new Configuration(false), f.toURI().toString());
    assertEquals("my.Mapper", back.get("mapreduce.job.map.class"));
    assertEquals("8192", back.get("io.file.buffer.size"));
    assertEquals("defaults come from the reading host", conf.get("hadoop.security.authentication"),
        back.get("hadoop.security.authentication"));
    Files.delete(f.toPath());
  }
}
