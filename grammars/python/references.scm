; Uses of names in Python, by role (see lsp_agent/syntax/references.py). Containers
; (@import, @inherit, @type) give their role to every name inside them; @call marks the
; callee expression, whose last name is the one called; @member is the name after a dot.

(import_statement) @import
(import_from_statement) @import
(future_import_statement) @import
(class_definition superclasses: (argument_list) @inherit)
(type) @type
(call function: (_) @call)
(decorator (identifier) @call)
(decorator (attribute) @call)
(attribute attribute: (identifier) @member)
