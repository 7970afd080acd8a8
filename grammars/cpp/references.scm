; C++'s additions to grammars/c/references.scm.

(using_declaration) @import
(base_class_clause) @inherit
(new_expression type: (_) @call)
