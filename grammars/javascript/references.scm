; Uses of names in JavaScript and TypeScript, by role (see grammars/python/references.scm).

(import_statement) @import
(export_statement source: (_)) @import
(class_heritage) @inherit
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
(member_expression property: (_) @member)
; A key of an object literal names a member of the object's type (`{ next: noop }` is an
; observer's `next`), never a local.
(pair key: (property_identifier) @member)
