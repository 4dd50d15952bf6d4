/* Linked data for tests/target_layouts.rs: the test parses this header with pointer targets
 * (Declarations::with_pointer_targets) and walks what the functions below build without raw
 * pointers; the functions ending in _length, _sum, _at and _count are C's own walks, which the
 * Rust walks are checked against. Written for any data model (no `long`). */

/* A singly linked list: each node points to the next (a self-referential struct). */
struct tl_node {
    int value;
    const char *label;
    struct tl_node *next;
};

/* A binary tree through a typedef, with a parent pointer inside an anonymous struct member
 * (a pointer to the record enclosing the record that declares it). */
typedef struct tl_tree tl_tree;
struct tl_tree {
    int key;
    tl_tree *left;
    tl_tree *right;
    struct {
        tl_tree *parent;
        int depth;
    } up;
};

/* Arrays ended by NULL, a byte buffer that is not a string, and a list. */
struct tl_bag {
    const char **names;
    struct tl_node **nodes;
    struct tl_node *first;
    unsigned char *bytes;
    int count;
};

/* n nodes: the value of node i is 3 * i + 1, its label "node <i>"; NULL for n <= 0. */
struct tl_node *tl_list(int n);
void tl_list_free(struct tl_node *list);
int tl_list_length(const struct tl_node *list);
int tl_list_sum(const struct tl_node *list);
const char *tl_label_at(const struct tl_node *list, int index);

/* A static NULL-terminated array of names. */
const char **tl_names(void);
int tl_names_count(void);
const char *tl_name_at(int index);

/* A complete tree of the given height (1: one node); keys in breadth-first order from 1. */
tl_tree *tl_tree_new(int height);
void tl_tree_free(tl_tree *tree);
int tl_tree_key_sum(const tl_tree *tree);

/* A bag of n nodes (its arrays NULL-terminated) and 4 bytes 0x00 0x7f 0x80 0xff. */
struct tl_bag *tl_bag_new(int n);
void tl_bag_free(struct tl_bag *bag);
