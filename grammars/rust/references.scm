; Uses of names in Rust, by role (see grammars/python/references.scm). A trait implemented or a
; supertrait is inheritance.

(use_declaration) @import
(call_expression function: (_) @call)
(macro_invocation macro: (_) @call)
(field_expression field: (_) @member)
(impl_item trait: (_) @inherit)
(trait_item bounds: (_) @inherit)
