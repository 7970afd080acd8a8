; Uses of names in Go, by role (see grammars/python/references.scm). An embedded field is Go's
; inheritance.

(import_declaration) @import
(call_expression function: (_) @call)
(selector_expression field: (field_identifier) @member)
(qualified_type) @type
(field_declaration_list (field_declaration !name type: (_) @inherit))
(interface_type (type_elem) @inherit)
