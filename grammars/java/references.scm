; Uses of names in Java, by role (see grammars/python/references.scm).

(import_declaration) @import
(method_invocation name: (identifier) @call)
(method_invocation object: (_) name: (identifier) @member)
(object_creation_expression type: (_) @call)
(field_access field: (identifier) @member)
(superclass) @inherit
(super_interfaces) @inherit
(extends_interfaces) @inherit
