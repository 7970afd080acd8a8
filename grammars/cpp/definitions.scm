; Definitions in C++, besides those of c/definitions.scm (the C++ grammar names C's nodes alike).
; A function's name sits at the bottom of its declarator, under pointers, references and
; qualifiers (`const Name& ns::Widget::name() {…}`); a query cannot follow a chain of any
; length, so functions capture their whole @declarator and the outline finds the name, and
; the qualifiers as the scope (ns/Widget/name). A template wraps its definition; being wider,
; the template's range (with `template <…>`) wins.

(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace
(class_specifier name: [(type_identifier) (template_type)] @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (template_type) @name body: (field_declaration_list)) @definition.struct
(alias_declaration name: (type_identifier) @name) @definition.type

(template_declaration (class_specifier name: (type_identifier) @name body: (field_declaration_list))) @definition.class
(template_declaration (struct_specifier name: (type_identifier) @name body: (field_declaration_list))) @definition.struct

; Besides C's functions and prototypes: templates of them, and methods declared in a
; class body; declarators that are not functions (`int x;`) are dropped by the outline.
(template_declaration (function_definition declarator: (_) @declarator)) @definition.function
(template_declaration (declaration declarator: (_) @declarator)) @definition.function
(field_declaration declarator: (_) @declarator) @definition.method
