//! The sample configurations under `conf/` are what operators copy: every `circumflex.*` key in them
//! must parse and build a policy, so a renamed or re-ranged key cannot leave them stale.

use std::path::Path;

use circumflex_core::config::EngineConfig;

/// The `(name, value)` pairs of a Hadoop configuration file's `<property>` elements.
fn properties(xml: &str) -> Vec<(String, String)> {
    let between = |text: &str, open: &str, close: &str| -> Option<String> {
        let start = text.find(open)? + open.len();
        let end = text[start..].find(close)? + start;
        Some(text[start..end].trim().to_string())
    };
    xml.split("<property>")
        .skip(1)
        .filter_map(|p| Some((between(p, "<name>", "</name>")?, between(p, "<value>", "</value>")?)))
        .collect()
}

fn check(file: &str) -> EngineConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conf").join(file);
    let xml = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let pairs = properties(&xml);
    assert!(pairs.iter().any(|(k, _)| k == "circumflex.policy"), "{file} sets no circumflex.policy");
    // Host-side keys the shims read themselves and never forward to the engine.
    let engine_keys = pairs.iter().filter(|(k, _)| k.starts_with("circumflex.") && !k.starts_with("circumflex.yarn."));
    let config = EngineConfig::from_pairs(engine_keys.map(|(k, v)| (k.as_str(), v.as_str())))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    circumflex_policies::create(&config).unwrap_or_else(|e| panic!("{file}: {e}"));
    config
}

#[test]
fn sample_yarn_site_parses_and_turns_the_levers_on() {
    let config = check("yarn-site.xml");
    assert!(config.preemption.enabled, "the sample shows preemption on");
    assert!(config.am.enabled, "the sample shows AM admission on");
}

#[test]
fn sample_mapred_site_parses() {
    check("mapred-site.xml");
}
