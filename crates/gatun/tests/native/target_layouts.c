/* Linked data for tests/target_layouts.rs (see target_layouts.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target_layouts.h"

struct tl_node *tl_list(int n) {
    struct tl_node *head = NULL;
    for (int i = n - 1; i >= 0; i--) {
        struct tl_node *node = malloc(sizeof *node);
        char *label = malloc(16);
        if (node == NULL || label == NULL) abort();
        snprintf(label, 16, "node %d", i);
        node->value = 3 * i + 1;
        node->label = label;
        node->next = head;
        head = node;
    }
    return head;
}

void tl_list_free(struct tl_node *list) {
    while (list != NULL) {
        struct tl_node *next = list->next;
        free((char *)list->label);
        free(list);
        list = next;
    }
}

int tl_list_length(const struct tl_node *list) {
    int n = 0;
    for (; list != NULL; list = list->next) n++;
    return n;
}

int tl_list_sum(const struct tl_node *list) {
    int sum = 0;
    for (; list != NULL; list = list->next) sum += list->value;
    return sum;
}

const char *tl_label_at(const struct tl_node *list, int index) {
    for (; list != NULL; list = list->next, index--)
        if (index == 0) return list->label;
    return NULL;
}

static const char *const names[] = {"alpha", "", "gamma delta", "\xc3\xa9t\xc3\xa9", NULL};

const char **tl_names(void) { return (const char **)names; }

int tl_names_count(void) { return (int)(sizeof names / sizeof names[0]) - 1; }

const char *tl_name_at(int index) { return names[index]; }

static tl_tree *tree_new(int height, int key, int depth, tl_tree *parent) {
    if (height <= 0) return NULL;
    tl_tree *t = malloc(sizeof *t);
    if (t == NULL) abort();
    t->key = key;
    t->up.parent = parent;
    t->up.depth = depth;
    t->left = tree_new(height - 1, 2 * key, depth + 1, t);
    t->right = tree_new(height - 1, 2 * key + 1, depth + 1, t);
    return t;
}

tl_tree *tl_tree_new(int height) { return tree_new(height, 1, 0, NULL); }

void tl_tree_free(tl_tree *tree) {
    if (tree == NULL) return;
    tl_tree_free(tree->left);
    tl_tree_free(tree->right);
    free(tree);
}

int tl_tree_key_sum(const tl_tree *tree) {
    if (tree == NULL) return 0;
    return tree->key + tl_tree_key_sum(tree->left) + tl_tree_key_sum(tree->right);
}

struct tl_bag *tl_bag_new(int n) {
    struct tl_bag *bag = malloc(sizeof *bag);
    if (bag == NULL) abort();
    bag->first = tl_list(n);
    bag->count = n;
    bag->names = tl_names();
    bag->nodes = calloc((size_t)n + 1, sizeof *bag->nodes);
    bag->bytes = malloc(4);
    if (bag->nodes == NULL || bag->bytes == NULL) abort();
    int i = 0;
    for (struct tl_node *node = bag->first; node != NULL; node = node->next) bag->nodes[i++] = node;
    memcpy(bag->bytes, "\x00\x7f\x80\xff", 4);
    return bag;
}

void tl_bag_free(struct tl_bag *bag) {
    tl_list_free(bag->first);
    free(bag->nodes);
    free(bag->bytes);
    free(bag);
}
