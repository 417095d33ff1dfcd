//! The system prompt a Loop session's checkpoints reconstruct (section 6, step 5). Both the
//! transcript and the replayed window show it, so it lives apart from either.

use serde_json::Value;

/// Step 5: fold checkpoints; `preamble` first, then names in order of first appearance.
pub(crate) fn system_prompt(checkpoints: &[&Value]) -> Option<String> {
    let mut order: Vec<String> = Vec::new();
    let mut values: std::collections::HashMap<String, String> = Default::default();
    for c in checkpoints {
        let Some(sections) = c.get("sections").and_then(Value::as_object) else {
            continue;
        };
        for (name, v) in sections {
            if !order.contains(name) {
                order.push(name.clone());
            }
            match v.as_str() {
                Some(s) => values.insert(name.clone(), s.to_string()),
                None => values.remove(name),
            };
        }
    }
    if let Some(i) = order.iter().position(|n| n == "preamble") {
        let p = order.remove(i);
        order.insert(0, p);
    }
    let parts: Vec<&str> = order
        .iter()
        .filter_map(|n| values.get(n).map(String::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}
