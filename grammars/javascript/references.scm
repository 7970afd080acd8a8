; Uses of names in JavaScript and TypeScript, by role (see grammars/python/references.scm).

(import_statement) @import
(export_statement source: (_)) @import
(class_heritage) @inherit
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
(member_expression property: (_) @member)
