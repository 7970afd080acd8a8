; Definitions in C++. A member defined outside its class (`void Widget::draw() {…}`) has the
; class captured as @scope, so its name path is Widget/draw. A template wraps its
; definition; being wider, the template's range (with `template <…>`) wins.

(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace
(class_specifier name: [(type_identifier) (template_type)] @name body: (field_declaration_list)) @definition.class
(struct_specifier name: [(type_identifier) (template_type)] @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro

(template_declaration (class_specifier name: (type_identifier) @name body: (field_declaration_list))) @definition.class
(template_declaration (struct_specifier name: (type_identifier) @name body: (field_declaration_list))) @definition.struct

; Functions and methods, written with their body.
(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)) @definition.function
(function_definition
  declarator: [(pointer_declarator) (reference_declarator)
    (function_declarator
      declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)]) @definition.function
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
      name: [(identifier) (destructor_name) (operator_name)] @name))) @definition.function
(function_definition
  declarator: [(pointer_declarator) (reference_declarator)
    (function_declarator
      declarator: (qualified_identifier
        scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
        name: [(identifier) (destructor_name) (operator_name)] @name))]) @definition.function
; two levels: ns::Widget::draw
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
      name: (qualified_identifier
        scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
        name: [(identifier) (destructor_name) (operator_name)] @name)))) @definition.function
(template_declaration
  (function_definition
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))) @definition.function

; Methods declared in a class body, defined elsewhere.
(field_declaration
  declarator: (function_declarator
    declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @definition.method
(declaration
  declarator: (function_declarator
    declarator: [(identifier) (destructor_name)] @name)) @definition.function
(template_declaration
  (function_definition
    declarator: (function_declarator
      declarator: (qualified_identifier
        scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
        name: [(identifier) (destructor_name) (operator_name)] @name)))) @definition.function
