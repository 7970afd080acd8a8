; Definitions in C++. A function's name sits at the bottom of its declarator, under pointers,
; references and qualifiers (`const Name& ns::Widget::name() {…}`); a query cannot follow a
; chain of any length, so functions capture their whole @declarator and the outline finds the
; name, and the qualifiers as the scope (ns/Widget/name). A template wraps its definition;
; being wider, the template's range (with `template <…>`) wins.

(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace
(class_specifier name: [(type_identifier) (template_type)] @name body: (field_declaration_list)) @definition.class
(struct_specifier name: [(type_identifier) (template_type)] @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(type_definition  ; a function pointer type: typedef int (*cmp_fn)(const void *, const void *);
  declarator: (function_declarator
    declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro

(template_declaration (class_specifier name: (type_identifier) @name body: (field_declaration_list))) @definition.class
(template_declaration (struct_specifier name: (type_identifier) @name body: (field_declaration_list))) @definition.struct

; Functions and methods with their body, and declared ones (prototypes, methods declared in
; a class body); declarators that are not functions (`int x;`) are dropped by the outline.
(function_definition declarator: (_) @declarator) @definition.function
(template_declaration (function_definition declarator: (_) @declarator)) @definition.function
(declaration declarator: (_) @declarator) @definition.function
(template_declaration (declaration declarator: (_) @declarator)) @definition.function
(field_declaration declarator: (_) @declarator) @definition.method
